import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileBounded } from '../../src/util/fs.js';
import { tempDir } from '../helpers/temp.js';

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
  });

  it(
    'refuses at once what is not a regular file: a device, a link to one, a FIFO without a writer, a folder; a link only when asked',
    { timeout: 20_000 },
    async () => {
      const fifo = join(tmp.dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      const zero = join(tmp.dir, 'zero');
      await symlink('/dev/zero', zero);
      const refusal = (path: string, kind: string) => ({ exitCode: 2, message: `${path} is ${kind}, not a regular file: it is not a PEM file.` });
      await expect(readFileBounded('/dev/zero', 1024 ** 2, 'PEM file')).rejects.toMatchObject(refusal('/dev/zero', 'a device'));
      await expect(readFileBounded(zero, 1024 ** 2, 'PEM file')).rejects.toMatchObject(refusal(zero, 'a device'));
      await expect(readFileBounded(fifo, 1024 ** 2, 'PEM file')).rejects.toMatchObject(refusal(fifo, 'a FIFO'));
      await expect(readFileBounded(tmp.dir, 1024 ** 2, 'PEM file')).rejects.toMatchObject(refusal(tmp.dir, 'a folder'));
      const file = join(tmp.dir, 'file');
      const link = join(tmp.dir, 'link');
      await writeFile(file, 'text');
      await symlink(file, link);
      expect((await readFileBounded(link, 10)).toString()).toBe('text');
      await expect(readFileBounded(link, 10, 'PEM file', { noFollow: true })).rejects.toMatchObject(refusal(link, 'a symbolic link'));
    },
  );

  it('reads an empty file as empty', async () => {
    const empty = join(tmp.dir, 'empty');
    await writeFile(empty, '');
    expect((await readFileBounded(empty, 10)).length).toBe(0);
  });
});
