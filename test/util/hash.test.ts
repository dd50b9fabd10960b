import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Files } from '../../src/util/hash.js';
import { useTempDir } from '../helpers/temp.js';

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('sha256Files', () => {
  const tmp = useTempDir('depotkit-hash-');

  it('hashes small files here and large ones on the workers, in the order given, counting every byte', async () => {
    // 64 KiB is the most hashed on the calling thread; one byte more goes to a worker.
    const files = [Buffer.alloc(0), randomBytes(100), randomBytes(64 * 1024), randomBytes(64 * 1024 + 1), randomBytes(3 * 1024 * 1024)];
    const paths = files.map((_, i) => join(tmp.dir, `f${i}`));
    await Promise.all(files.map((data, i) => writeFile(paths[i]!, data)));
    let counted = 0;
    const results = await sha256Files([...paths].reverse(), { onBytes: (n) => (counted += n) });
    expect(results.map((r) => r.path)).toEqual([...paths].reverse());
    expect(results.map((r) => r.sha256)).toEqual(files.map(sha256).reverse());
    expect(counted).toBe(files.reduce((sum, f) => sum + f.length, 0));
  });

  it('reports a missing file and a folder each as an error of its own, and hashes the rest', async () => {
    const file = join(tmp.dir, 'present');
    await writeFile(file, 'bytes');
    const folder = join(tmp.dir, 'a-folder');
    await mkdir(folder);
    const [missing, dir, present] = await sha256Files([join(tmp.dir, 'absent'), folder, file]);
    expect(missing!.error?.code).toBe('ENOENT');
    expect(dir!.error?.code).toBe('EISDIR');
    expect(present!.sha256).toBe(sha256(Buffer.from('bytes')));
  });
});
