import { execFileSync } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../src/installer/inventory.js';
import { packDepot } from '../../src/transfer/pack.js';
import { isTempName, writeFileSetAtomic } from '../../src/util/fs.js';
import { tempDir } from '../helpers/temp.js';
import { demo } from '../transfer/helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('depotkit-local-files-')));
afterAll(() => cleanup());

describe('local files that are not what they seem', () => {
  it('an inventory that is a FIFO or a link to /dev/zero is refused at once: never waited on, never read whole', { timeout: 20_000 }, async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    await expect(loadInventory(fifo)).rejects.toMatchObject({ exitCode: 2, message: `${fifo} is a FIFO, not a regular file: it is not a consumer inventory.` });
    const zero = join(dir, 'zero.yaml');
    await symlink('/dev/zero', zero);
    await expect(loadInventory(zero)).rejects.toMatchObject({
      exitCode: 2,
      message: `${zero} is a device, not a regular file: it is not a consumer inventory.`,
    });
  });

  it("a seal file reached through a link into the pack's folder (or a pack folder reached through one) is refused before anything is written", async () => {
    const depot = await demo(join(dir, 'depot'), 4096);
    const media = join(dir, 'media');
    await mkdir(media);
    const intoMedia = join(dir, 'seals');
    await symlink(media, intoMedia);
    const pack = (out: string, sealFile: string) => packDepot({ depot, out, volumeSize: 256 * 1024, sealFile });
    await expect(pack(media, join(intoMedia, 'seal.txt'))).rejects.toMatchObject({
      exitCode: 2,
      message: `The seal file ${join(intoMedia, 'seal.txt')} (through a link: ${join(media, 'seal.txt')}) is inside the pack's folder ${media}: the seal must travel apart from the media it vouches for.`,
    });
    // The pack's folder named through the link, the seal by its real path; and a seal in a folder not yet made there.
    await expect(pack(intoMedia, join(media, 'seal.txt'))).rejects.toThrow('the seal must travel apart from the media it vouches for');
    await expect(pack(media, join(intoMedia, 'new', 'seal.txt'))).rejects.toThrow('the seal must travel apart from the media it vouches for');
    expect(await readdir(media)).toEqual([]);
  });

  it('a set of files that names one path twice is refused before anything is written: no temporary copy of a key is left', async () => {
    const key = join(dir, 'served.pem');
    await writeFile(key, 'old', { mode: 0o600 });
    await expect(
      writeFileSetAtomic(
        [
          { path: key, data: 'new key', mode: 0o600 },
          { path: key, data: 'new certificate' },
        ],
        { force: true },
      ),
    ).rejects.toMatchObject({ exitCode: 2, message: `${key} is given twice in one set of files to write.` });
    expect((await readdir(dir)).filter(isTempName)).toEqual([]);
  });
});
