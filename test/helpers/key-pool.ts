import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
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

/**
 * The environment under which a child process of the built CLI takes the RSA keys it generates from the suite's pool,
 * as the tests' own library calls do (test/setup/keys.ts): real keys of the size asked for, not generated anew in each
 * child. The CLI's bundle holds no useKeySource, so the module Node loads first (`--import`, written by
 * test/setup/key-pool.ts) answers node:crypto's generateKeyPair for RSA PEM keys of a pooled size; keys taken one after
 * another differ across the children too. runCli and spawnCliJson give it to every child.
 */
export function pooledKeysEnv(): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${pathToFileURL(inject('keyPreload')).href}`].filter(Boolean).join(' ') };
}
