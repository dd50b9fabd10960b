import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import { KEY_POOL_LASTING } from '../setup/key-pool.js';

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

const lasting = new AsyncLocalStorage<true>();
const lastingTaken = new Map<number, number>();

/**
 * Runs `make` with keys the round robin (this process's and the CLI children's) never hands out, at most
 * KEY_POOL_LASTING of a size for the process's whole life: for a certificate a helper keeps while the worker
 * lives. Were its key handed out again, a later certificate of the same name (two self-signed `CN=127.0.0.1`, say)
 * would carry the same key id, and OpenSSL, looking the trust anchor up by name and key id, could take the one for
 * the other: a flaky DEPTH_ZERO_SELF_SIGNED_CERT.
 */
export function lastingKeys<T>(make: () => Promise<T>): Promise<T> {
  return lasting.run(true, make);
}

/** The pool's keys of `bits` kept out of the round robin for lastingKeys: its last KEY_POOL_LASTING. */
export function lastingKeyPems(bits: number): string[] {
  const keys = loaded()[String(bits)] ?? [];
  return keys.slice(keys.length - (KEY_POOL_LASTING[String(bits)] ?? 0));
}

/**
 * The next of the suite's pre-generated RSA keys of `bits` (test/setup/key-pool.ts), as PKCS#8 PEM: round robin, so
 * the keys a test takes one after another differ; inside lastingKeys, the next of lastingKeyPems instead.
 */
export function pooledKeyPem(bits: number): string {
  const keys = loaded()[String(bits)];
  if (!keys?.length) throw new Error(`the test key pool holds no ${bits}-bit keys`);
  const kept = lastingKeyPems(bits);
  if (lasting.getStore()) {
    const taken = lastingTaken.get(bits) ?? 0;
    if (taken >= kept.length) throw new Error(`the test key pool keeps ${kept.length} ${bits}-bit keys for lasting certificates, all taken`);
    lastingTaken.set(bits, taken + 1);
    return kept[taken]!;
  }
  const next = ((handedOut.get(bits) ?? -1) + 1) % (keys.length - kept.length);
  handedOut.set(bits, next);
  return keys[next]!;
}

/**
 * The environment under which a child process of the built CLI takes the RSA keys it generates from the suite's pool,
 * as the tests' own library calls do (test/setup/keys.ts): real keys of the size asked for, not generated anew in each
 * child. The CLI's bundle holds no useKeySource, so the module Node loads first (`--import`, written by
 * test/setup/key-pool.ts) answers node:crypto's generateKeyPair for RSA PEM keys of a pooled size; keys taken one after
 * another differ across the children too. spawnCli (and runCli, spawnCliJson through it) gives it to every child.
 */
export function pooledKeysEnv(): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${pathToFileURL(inject('keyPreload')).href}`].filter(Boolean).join(' ') };
}
