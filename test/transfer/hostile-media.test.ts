import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackFile, PackManifest } from '../../src/transfer/format.js';
import { demoFixture, sha256, treeOf } from './helpers.js';
import { packIn, unpackIn as unpack, unpackText } from './in-process.js';
import { copyPack, readManifest, replaceBytes, resum, stopLeftovers, unpack as unpackProcess, writeManifest } from './tamper.js';

const BINARY = 64 * 1024;

let packDir: string;
let manifest: PackManifest;
const media = () => copyPack(packDir, fx.fresh('media'));

const fx = demoFixture('depotkit-hostile-', BINARY);

beforeAll(async () => {
  packDir = join(fx.base, 'pack');
  expect((await packIn(fx.depot, packDir)).code).toBe(0);
  manifest = await readManifest(packDir);
});
afterAll(() => stopLeftovers());

/** A binary stored whole in one volume. */
const oneBinary = (m: PackManifest, skip = 0): PackFile => m.files.filter((f) => f.kind === 'binary' && f.pieces.length === 1)[skip]!;

describe('depot unpack on hostile media', () => {
  it("never follows a volume that is a symbolic link: a local secret it points to is not read, and its files fail (state 'refused')", async () => {
    const dir = await media();
    const secret = fx.fresh('secret.key');
    const key = randomBytes(32);
    await writeFile(secret, key, { mode: 0o600 });
    // The attacker's manifest maps the linked volume's bytes to a file it knows the SHA-256 of.
    const m = await readManifest(dir);
    const index = m.volumes.length + 1;
    m.volumes.push({ index, name: 'depot-extra.tar', size: key.length, sha256: sha256(key) });
    m.files.push({
      path: 'PROD/leak.bin',
      size: key.length,
      sha256: sha256(key),
      kind: 'metadata',
      mtime: 0,
      pieces: [{ volume: index, member: 'PROD/leak.bin', fileOffset: 0, length: key.length, dataOffset: 0 }],
    });
    await symlink(secret, join(dir, 'depot-extra.tar'));
    await writeManifest(dir, m);

    const out = fx.fresh('out');
    const { code, report } = await unpack([dir], out);
    expect(code).toBe(1);
    expect(report.volumes[index - 1]).toMatchObject({ name: 'depot-extra.tar', state: 'refused', reason: 'is a symbolic link, not a regular file' });
    expect(report.failed).toEqual([expect.objectContaining({ path: 'PROD/leak.bin', volumes: [index] })]);
    expect(existsSync(join(out, 'PROD/leak.bin'))).toBe(false);
    expect(report.bytesRead).toBe(manifest.volumes.reduce((s, v) => s + v.size, 0));
    // The rest of the pack is placed.
    expect(await treeOf(out)).toEqual(await treeOf(fx.depot));

    expect(unpackText(report)).toContain('ERROR volume depot-extra.tar was not read: it is a symbolic link, not a regular file');
  });

  it('reads the manifest and SHA256SUMS only as regular files: a FIFO, a link to /dev/zero, a folder is refused at once (exit 1), never read', async () => {
    const fifo = await media();
    await rm(join(fifo, 'depot-pack.json'));
    execFileSync('mkfifo', [join(fifo, 'depot-pack.json')]);
    // A process of its own for these two: were one read, the open or the read would never return.
    const blocked = await unpackProcess([fifo], fx.fresh('out'));
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('depot-pack.json is a FIFO, not a regular file');

    const zero = await media();
    await rm(join(zero, 'depot-pack.json'));
    await symlink('/dev/zero', join(zero, 'depot-pack.json'));
    const endless = await unpackProcess([zero], fx.fresh('out'));
    expect(endless.code).toBe(1);
    expect(endless.stderr).toContain('depot-pack.json is a symbolic link, not a regular file');

    // An unreadable SHA256SUMS is not "absent": the manifest would go unchecked.
    const folder = await media();
    await rm(join(folder, 'SHA256SUMS'));
    await mkdir(join(folder, 'SHA256SUMS'));
    const out = fx.fresh('out');
    const refused = await unpack([folder], out);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SHA256SUMS is a folder, not a regular file');
    expect(existsSync(out)).toBe(false);

    const linked = await media();
    const sums = fx.fresh('sums');
    await rename(join(linked, 'SHA256SUMS'), sums);
    await symlink(sums, join(linked, 'SHA256SUMS'));
    expect((await unpack([linked], fx.fresh('out'))).stderr).toContain('SHA256SUMS is a symbolic link, not a regular file');
  });

  it("holds every binary to the catalog the pack carries: bytes replaced with the manifest's SHA-256 changed to match are refused before they are read", async () => {
    const dir = await media();
    const m = await readManifest(dir);
    const swapped = oneBinary(m, 0);
    const fake = randomBytes(swapped.size);
    await replaceBytes(dir, m, swapped, fake);
    swapped.sha256 = sha256(fake);
    // Relabelled as metadata, a binary would escape the catalog's checks.
    const relabelled = oneBinary(m, 1);
    const other = randomBytes(relabelled.size);
    await replaceBytes(dir, m, relabelled, other);
    relabelled.sha256 = sha256(other);
    relabelled.kind = 'metadata';
    // And one the catalog does not name at all.
    m.files.push({ path: 'PROD/COMP/VCENTER/extra.bin', size: 0, sha256: sha256(''), kind: 'binary', mtime: 0, pieces: [] });
    await writeManifest(dir, m);

    const out = fx.fresh('out');
    const { code, report } = await unpack([dir], out);
    expect(code).toBe(1);
    const reasons = Object.fromEntries(report.failed.map((f) => [f.path, f.reason]));
    expect(reasons).toEqual({
      [swapped.path]: "its SHA-256 in the manifest is not the catalog's",
      [relabelled.path]: `the catalog names ${relabelled.path} as a binary, the manifest as metadata`,
      'PROD/COMP/VCENTER/extra.bin': 'the catalog does not name it',
    });
    for (const path of Object.keys(reasons)) expect(existsSync(join(out, path))).toBe(false);
    expect(report.catalogFrom).toBe('pack');
    // Refused before reading: the volumes holding them are read only for the other files.
    const tree = await treeOf(out);
    expect(Object.keys(tree).length).toBe(Object.keys(await treeOf(fx.depot)).length - 2);
  });

  it('refuses a manifest that names both X and X/child, or pieces over the same bytes of a volume, before anything is written (exit 2)', async () => {
    const nested = await media();
    const m = await readManifest(nested);
    const file = m.files.find((f) => f.kind === 'metadata' && f.path !== 'PROD/metadata/productVersionCatalog/v1/productVersionCatalog.json')!;
    m.files.push({ ...file, path: `${file.path}/child` });
    await writeManifest(nested, m);
    const out = fx.fresh('out');
    const res = await unpack([nested], out);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`it names ${file.path} as a file and as the folder of ${file.path}/child`);
    expect(existsSync(out)).toBe(false);

    // One volume's bytes offered to many candidate files (each byte to 256 of them) is how a hostile manifest guesses content.
    const overlapping = await media();
    const o = await readManifest(overlapping);
    const target = oneBinary(o);
    for (let b = 0; b < 4; b++) {
      o.files.push({
        ...target,
        path: `PROD/guess-${b}.bin`,
        size: 1,
        sha256: sha256(Buffer.from([b])),
        kind: 'metadata',
        pieces: [{ ...target.pieces[0]!, length: 1 }],
      });
    }
    await writeManifest(overlapping, o);
    const guessed = await unpack([overlapping], fx.fresh('out'));
    expect(guessed.code).toBe(2);
    expect(guessed.stderr).toMatch(/pieces of .* lie over the same bytes of a volume/);
  });

  it('places and reports an empty file that has no piece', async () => {
    const dir = await media();
    const m = await readManifest(dir);
    m.files.push({ path: 'PROD/metadata/empty.json', size: 0, sha256: sha256(''), kind: 'metadata', mtime: 0, pieces: [] });
    await writeManifest(dir, m);
    const out = fx.fresh('out');
    const { code, report } = await unpack([dir], out);
    expect(code).toBe(0);
    expect(report.placed).toContainEqual({ path: 'PROD/metadata/empty.json', size: 0 });
    expect((await stat(join(out, 'PROD/metadata/empty.json'))).size).toBe(0);
  });

  it('reads a volume longer than the manifest says only up to its size, and names it (exit 1)', async () => {
    const dir = await media();
    const last = manifest.volumes.at(-1)!;
    await appendFile(join(dir, last.name), Buffer.alloc(1024 * 1024));
    await resum(dir);
    const out = fx.fresh('out');
    const { code, report } = await unpack([dir], out);
    expect(code).toBe(1);
    expect(report.volumes.at(-1)).toMatchObject({ state: 'corrupt', size: last.size, actualSize: last.size + 1024 * 1024 });
    expect(report.bytesRead).toBe(manifest.volumes.reduce((s, v) => s + v.size, 0));
    // Its files are whole (each checked by its own SHA-256): placed.
    expect(await treeOf(out)).toEqual(await treeOf(fx.depot));
    expect(unpackText(report)).toContain(`ERROR volume ${last.name} is ${last.size + 1024 * 1024} bytes, the manifest says ${last.size}`);
  });
});
