import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonChunks, writeJsonStreamed } from '../../src/transfer/manifest-writer.js';
import { tempDir } from '../helpers/temp.js';
import { sha256 } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('depotkit-manifest-writer-')));
afterAll(() => cleanup());

const sample = {
  format: 'depotkit-pack',
  version: 1,
  since: undefined,
  source: { catalogSha256: 'ab'.repeat(32), release: '9.0.0.0', releases: [] },
  volumes: [{ index: 1, name: 'depot-001-of-001.tar', size: 10240, sha256: 'cd'.repeat(32) }],
  files: [
    { path: 'PROD/a "quoted" \u00e9 name\n', size: 0, pieces: [], catalogMismatch: undefined, flags: [true, false, null, undefined, 1.5, -0] },
    { path: 'PROD/b', nested: { deeper: { deepest: [[], {}, [[1]]] } } },
  ],
  tree: [],
  removed: [],
};

describe('the pack manifest written in pieces', () => {
  it('spells JSON exactly as JSON.stringify does with an indent', () => {
    for (const indent of [1, 2, 4]) expect([...jsonChunks(sample, indent)].join('')).toBe(JSON.stringify(sample, null, indent));
    for (const leaf of [null, 'x', 3, [], {}]) expect([...jsonChunks(leaf, 1)].join('')).toBe(JSON.stringify(leaf, null, 1));
  });

  it('writes through a temporary name, returns the SHA-256 of the bytes written, and replaces a file only when told to', async () => {
    const path = join(dir, 'depot-pack.json');
    const big = { ...sample, files: Array.from({ length: 20_000 }, (_, i) => ({ path: `PROD/COMP/X/file-${i}.bin`, size: i, sha256: 'ef'.repeat(32) })) };
    const digest = await writeJsonStreamed(path, big, 1, false);
    const written = await readFile(path);
    expect(written.toString('utf8')).toBe(`${JSON.stringify(big, null, 1)}\n`);
    expect(digest).toBe(sha256(written));
    await expect(writeJsonStreamed(path, sample, 1, false)).rejects.toThrow(`${path} already exists.`);
    await writeFile(path, 'old');
    await writeJsonStreamed(path, sample, 1, true);
    expect(await readFile(path, 'utf8')).toBe(`${JSON.stringify(sample, null, 1)}\n`);
  });
});
