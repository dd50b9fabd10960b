/** How long `until` keeps looking and how often. */
export interface PollOptions {
  /** 10 s by default: a bound for a test that would otherwise hang, not a measure of speed. */
  timeoutMs?: number;
  /** 25 ms by default. */
  everyMs?: number;
  /** Why waiting is pointless now (the process ended, say), or undefined: the wait fails at once with it. */
  failIf?: () => string | undefined | Promise<string | undefined>;
}

/**
 * Waits for an event the test cannot be told of: reads until `done` says so
 * (or, given a condition alone, until it holds), and fails after the bound.
 * Returns the last value read.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, opts?: PollOptions): Promise<void>;
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, opts?: PollOptions): Promise<T>;
export async function until<T>(
  read: () => T | Promise<T>,
  doneOrWhat: ((value: T) => boolean) | string,
  whatOrOpts?: string | PollOptions,
  maybeOpts?: PollOptions,
): Promise<T> {
  const done = typeof doneOrWhat === 'function' ? doneOrWhat : (value: T) => Boolean(value);
  const what = typeof doneOrWhat === 'string' ? doneOrWhat : (whatOrOpts as string);
  const opts = (typeof doneOrWhat === 'string' ? whatOrOpts : maybeOpts) as PollOptions | undefined;
  const timeoutMs = opts?.timeoutMs ?? 10_000;
  const everyMs = opts?.everyMs ?? 25;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failed = await opts?.failIf?.();
    if (failed !== undefined) throw new Error(`Gave up waiting for ${what}: ${failed}`);
    const value = await read();
    if (done(value)) return value;
    if (Date.now() >= deadline) throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
