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

/**
 * The environment under which the built CLI's child processes take the RSA keys they generate from the suite's pool, as
 * the tests' own library calls do (test/setup/keys.ts): real keys of the size asked for, not generated anew in each
 * child (the CLI's bundle holds no useKeySource, so the module Node loads first (`--import`) answers node:crypto's
 * generateKeyPair for RSA PEM keys of a pooled size). `dir` gets that module and its record of the keys handed out,
 * so that keys taken one after another differ across the children too; keep it out of folders a test lists.
 */
export async function pooledKeysEnv(dir: string): Promise<NodeJS.ProcessEnv> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const claims = join(dir, 'pooled-keys');
  await mkdir(claims, { recursive: true });
  const preload = join(dir, 'pooled-keys.mjs');
  await writeFile(preload, PRELOAD.replace('POOL', JSON.stringify(inject('keyPool'))).replace('CLAIMS', JSON.stringify(claims)));
  return { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${pathToFileURL(preload).href}`].filter(Boolean).join(' ') };
}

const PRELOAD = `import crypto from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
const pool = JSON.parse(readFileSync(POOL, 'utf8'));
const original = crypto.generateKeyPair;
const originalAsync = promisify(original);
// The n-th key of a size taken by any child: the first name n free to create exclusively.
function next(bits) {
  for (let n = 0; ; n++) {
    try {
      closeSync(openSync(CLAIMS + '/' + bits + '-' + n, 'wx'));
      return n;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
  }
}
function pooled(type, options) {
  const keys = pool[String(options?.modulusLength)];
  const pem = (encoding, kind) => encoding?.format === 'pem' && encoding.type === kind;
  if (type !== 'rsa' || !keys?.length || !pem(options.publicKeyEncoding, 'spki') || !pem(options.privateKeyEncoding, 'pkcs8') || options.privateKeyEncoding.cipher) return undefined;
  const privateKey = keys[next(options.modulusLength) % keys.length];
  return { publicKey: crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }), privateKey };
}
function generateKeyPair(type, options, callback) {
  const keys = pooled(type, options);
  if (!keys) return original(type, options, callback);
  process.nextTick(callback, null, keys.publicKey, keys.privateKey);
}
generateKeyPair[promisify.custom] = async (type, options) => pooled(type, options) ?? originalAsync(type, options);
crypto.generateKeyPair = generateKeyPair;
syncBuiltinESMExports();
`;
