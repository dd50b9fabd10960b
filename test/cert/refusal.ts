import { expect } from 'vitest';
import { DepotkitError } from '../../src/util/errors.js';

/** What `promise` is refused with: a DepotkitError of exit 2 (bad usage or input), one sentence. */
export async function usageRefusal(promise: Promise<unknown>): Promise<DepotkitError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DepotkitError);
  expect((err as DepotkitError).exitCode).toBe(2);
  return err as DepotkitError;
}
