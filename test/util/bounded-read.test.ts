import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileBounded } from '../../src/util/fs.js';
import { tempDir } from '../helpers/cli.js';

describe('readFileBounded', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    tmp = await tempDir('depotkit-bounded-');
  });
  afterAll(() => tmp.cleanup());

  it('reads a file of several chunks whole, a file of exactly the limit, and refuses one byte more', async () => {
    const limit = 200 * 1024 + 3; // more than three 64 KiB chunks, not a multiple of one
    const bytes = randomBytes(limit + 1);
    const atLimit = join(tmp.dir, 'at-limit');
    const over = join(tmp.dir, 'over');
    await writeFile(atLimit, bytes.subarray(0, limit));
    await writeFile(over, bytes);
    expect((await readFileBounded(atLimit, limit)).equals(bytes.subarray(0, limit))).toBe(true);
    await expect(readFileBounded(over, limit, 'PEM file')).rejects.toMatchObject({
      exitCode: 2,
      message: `${over} is larger than ${limit} bytes: it is not a PEM file.`,
    });
    await expect(readFileBounded('/dev/zero', 1024 * 1024, 'PEM file')).rejects.toThrow('/dev/zero is larger than 1 MiB: it is not a PEM file.');
  });

  it('reads an empty file as empty', async () => {
    const empty = join(tmp.dir, 'empty');
    await writeFile(empty, '');
    expect((await readFileBounded(empty, 10)).length).toBe(0);
  });
});
