// Global set-up: RSA keys for the suite, generated once and kept for later runs (node_modules/.cache), then handed
// out round robin by test/helpers/key-pool.ts. A key per certificate made generation a fifth of the suite's CPU.
import { generateKeyPair } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../helpers/temp.js';

/**
 * How many keys of each size: enough that the keys of one test differ; 2048 is what most tests ask for, 3072 the
 * default of a CA and of a management server's CSR. No test asks for 4096 bits; a CLI child that does makes its own.
 */
const KEY_POOL_SIZES = { 2048: 32, 3072: 6 } as const;
/**
 * How many keys of a size stay out of the round robin, the tests' and the CLI children's alike, for the certificates
 * a helper keeps for a worker's whole life (lastingKeys in test/helpers/key-pool.ts).
 */
export const KEY_POOL_LASTING: Readonly<Record<string, number>> = { 2048: 6 };
const FILE = join(REPO_ROOT, 'node_modules', '.cache', 'depotkit-test', 'key-pool-v1.json');

declare module 'vitest' {
  export interface ProvidedContext {
    keyPool: string;
    /** The module a CLI child loads first to take its keys from the pool (test/helpers/key-pool.ts pooledKeysEnv). */
    keyPreload: string;
  }
}

async function makePool(): Promise<void> {
  const generate = promisify(generateKeyPair);
  const pool: Record<string, string[]> = {};
  await Promise.all(
    Object.entries(KEY_POOL_SIZES).map(async ([bits, count]) => {
      pool[bits] = await Promise.all(
        Array.from({ length: count }, async () => {
          const { privateKey } = await generate('rsa', {
            modulusLength: Number(bits),
            publicKeyEncoding: { type: 'spki', format: 'pem' },
            privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
          });
          return privateKey;
        }),
      );
    }),
  );
  await mkdir(dirname(FILE), { recursive: true });
  const partial = `${FILE}.${process.pid}.tmp`;
  await writeFile(partial, JSON.stringify(pool), { mode: 0o600 });
  await rename(partial, FILE);
}

/**
 * A module for a child's `--import`: node:crypto's generateKeyPair answers RSA PEM keys of a pooled size from the pool,
 * the n-th key of a size for the n-th taken by any child of this run (claimed by exclusive create in `claims`).
 */
function preloadModule(claims: string): string {
  return PRELOAD.replace('POOL', JSON.stringify(FILE)).replace('CLAIMS', JSON.stringify(claims)).replace('LASTING', JSON.stringify(KEY_POOL_LASTING));
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!existsSync(FILE)) await makePool();
  const run = await mkdtemp(join(tmpdir(), 'depotkit-test-keys-'));
  const claims = join(run, 'claims');
  await mkdir(claims);
  const preload = join(run, 'pooled-keys.mjs');
  await writeFile(preload, preloadModule(claims));
  project.provide('keyPool', FILE);
  project.provide('keyPreload', preload);
  return () => rm(run, { recursive: true, force: true });
}

const PRELOAD = `import crypto from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
const pool = JSON.parse(readFileSync(POOL, 'utf8'));
const lasting = LASTING;
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
  const privateKey = keys[next(options.modulusLength) % (keys.length - (lasting[String(options.modulusLength)] ?? 0))];
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
