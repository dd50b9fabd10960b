// Global set-up: RSA keys for the suite, generated once and kept for later runs (node_modules/.cache), then handed
// out round robin by test/helpers/key-pool.ts. A key per certificate made generation a fifth of the suite's CPU.
import { generateKeyPair } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../helpers/temp.js';

/** How many keys of each size: enough that the keys of one test differ; 2048 is what most tests ask for. */
export const KEY_POOL_SIZES = { 2048: 32, 3072: 6, 4096: 2 } as const;
const FILE = join(REPO_ROOT, 'node_modules', '.cache', 'depotkit-test', 'key-pool-v1.json');

declare module 'vitest' {
  export interface ProvidedContext {
    keyPool: string;
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

export default async function setup(project: TestProject): Promise<void> {
  if (!existsSync(FILE)) await makePool();
  project.provide('keyPool', FILE);
}
