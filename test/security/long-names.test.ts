import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEPOT_PATHS, TEMP_PREFIX } from '../../src/constants.js';
import { buildDepot } from '../../src/depot/build.js';
import { isTempName, tempPathFor, writeFileAtomic, writeFileSetAtomic } from '../../src/util/fs.js';
import { tempDir } from '../helpers/temp.js';
import { listFiles, sha256, vendorLikeSource } from '../depot/helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

/** `count` characters of `char`: ASCII, 2-, 3- and 4-byte UTF-8. */
/** NAME_MAX of Linux file systems, in bytes. */
const NAME_MAX_BYTES = 255;
const CHARS = ['a', 'é', '€', '😀'];
const bytes = (text: string) => Buffer.byteLength(text);

describe('temporary names of long final names', () => {
  it('fit NAME_MAX for every final name that does, in bytes, and never cut a character', () => {
    for (const char of CHARS) {
      for (let count = 1; bytes(char.repeat(count)) <= NAME_MAX_BYTES; count++) {
        const name = char.repeat(count);
        const temp = basename(tempPathFor(join(dir, name)));
        expect(bytes(temp), `${count} × ${char}`).toBeLessThanOrEqual(NAME_MAX_BYTES);
        expect(isTempName(temp)).toBe(true);
        // Whole code points only: the name survives a round trip through UTF-8.
        expect(Buffer.from(temp).toString('utf8')).toBe(temp);
        expect(temp).toMatch(/^\.depotkit-tmp-[0-9a-f]{12}-/);
        if (bytes(name) <= 200) expect(temp.endsWith(`-${name}`)).toBe(true);
      }
    }
    // Two long names with one start still get different temporary names (besides the random part).
    const a = basename(tempPathFor(join(dir, `${'x'.repeat(240)}-a.iso`))).slice(TEMP_PREFIX.length + 13);
    const b = basename(tempPathFor(join(dir, `${'x'.repeat(240)}-b.iso`))).slice(TEMP_PREFIX.length + 13);
    expect(a).not.toBe(b);
  });

  it('writeFileAtomic writes and replaces files whose names take the whole of NAME_MAX', async () => {
    for (const char of CHARS) {
      const name = char.repeat(Math.floor(NAME_MAX_BYTES / bytes(char)));
      const path = join(dir, name);
      await writeFileAtomic(path, 'one');
      await writeFileAtomic(path, 'two', { force: true });
      expect(await readFile(path, 'utf8')).toBe('two');
    }
    expect((await readdir(dir)).filter(isTempName)).toEqual([]);
  });

  it('a replaced set clears the leftover temporary files of its own long names only', async () => {
    const mine = join(dir, `${'k'.repeat(245)}.key`);
    const other = join(dir, `${'k'.repeat(245)}.pem`);
    // What an interrupted run leaves: a temporary file for each.
    const leftMine = tempPathFor(mine);
    const leftOther = tempPathFor(other);
    await writeFile(leftMine, 'old private key');
    await writeFile(leftOther, 'someone else');
    await writeFileSetAtomic([{ path: mine, data: 'new key', mode: 0o600 }]);
    expect(await readFile(mine, 'utf8')).toBe('new key');
    expect((await readdir(dir)).sort()).toEqual([basename(leftOther), basename(mine)].sort());
  });

  it('depot build places a binary whose catalog name is 250 bytes long', async () => {
    const src = await vendorLikeSource(dir, 512);
    const first = src.binaries[0]!;
    const longName = `${'VMware-'.repeat(34)}.iso`.slice(-250);
    const catalogPath = join(src.metadataDir, DEPOT_PATHS.catalog);
    const catalog = JSON.parse(await readFile(catalogPath, 'utf8'));
    catalog.patches[first.component][0].artifacts.bundles[0].binaries[0].fileName = longName;
    await writeFile(catalogPath, JSON.stringify(catalog, null, 2));
    const download = (await listFiles(src.binariesDir)).find((f) => f.endsWith(first.fileName))!;
    await rename(join(src.binariesDir, download), join(src.binariesDir, longName));

    const out = join(dir, 'out');
    const report = await buildDepot({ metadata: src.metadataDir, binaries: [src.binariesDir], out });
    const placed = report.placed.find((p) => p.path.endsWith(longName));
    expect(placed).toBeDefined();
    expect(sha256(await readFile(join(out, placed!.path)))).toBe(first.checksum);
    expect(report.ok).toBe(true);
  });
});
