import { readFileSync } from 'node:fs';
import { inject } from 'vitest';

let pool: Record<string, string[]> | undefined;
const handedOut = new Map<number, number>();

function loaded(): Record<string, string[]> {
  pool ??= JSON.parse(readFileSync(inject('keyPool'), 'utf8')) as Record<string, string[]>;
  return pool;
}

/** Every key of the pool, of every size. */
export function pooledKeys(): string[] {
  return Object.values(loaded()).flat();
}

/**
 * The next of the suite's pre-generated RSA keys of `bits` (test/setup/key-pool.ts), as PKCS#8 PEM: round robin, so
 * the keys a test takes one after another differ.
 */
export function pooledKeyPem(bits: number): string {
  const keys = loaded()[String(bits)];
  if (!keys?.length) throw new Error(`the test key pool holds no ${bits}-bit keys`);
  const next = ((handedOut.get(bits) ?? -1) + 1) % keys.length;
  handedOut.set(bits, next);
  return keys[next]!;
}
