import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManifest, planVolumes } from '../../src/transfer/format.js';
import { BLOCK, END_OF_ARCHIVE, MAX_MEMBER_DATA, encodeHeader, listMembers, roundUpToBlock } from '../../src/transfer/tar.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tempDir('depotkit-format-')));
afterAll(() => cleanup());

/** An archive of `members` written with our headers, as pack writes a volume. */
function archive(members: { name: string; data: Buffer }[]): Buffer {
  const parts: Buffer[] = [];
  for (const m of members) {
    parts.push(encodeHeader(m.name, m.data.length, 1_700_000_000), m.data, Buffer.alloc(roundUpToBlock(m.data.length) - m.data.length));
  }
  parts.push(Buffer.alloc(END_OF_ARCHIVE));
  return Buffer.concat(parts);
}

describe('tar headers', () => {
  it('are read by GNU tar: short names, names split into prefix and name, and names only a pax header can hold', async () => {
    const long = `PROD/COMP/VCENTER/vmw/${'d'.repeat(120)}/${'x'.repeat(90)}.xml`;
    const oneSegment = `PROD/COMP/VCENTER/${'y'.repeat(180)}.iso`;
    const members = [
      { name: 'PROD/metadata/manifest/v1/vcfManifest.json', data: Buffer.from('{"releases":[]}') },
      { name: long, data: Buffer.from('long path') },
      { name: oneSegment, data: Buffer.alloc(1000, 7) },
      { name: 'PROD/COMP/ESX_HOST/empty.bin', data: Buffer.alloc(0) },
    ];
    const file = join(dir, 'headers.tar');
    await writeFile(file, archive(members));
    const listing = execFileSync('tar', ['-tvf', file], { encoding: 'utf8' });
    for (const m of members) expect(listing).toContain(m.name);
    expect(listing).not.toContain('PaxHeaders');
    const out = join(dir, 'extracted');
    await mkdir(out);
    execFileSync('tar', ['-xf', file, '-C', out]);
    for (const m of members) expect(await readFile(join(out, m.name))).toEqual(m.data);
    // Our own reader agrees with tar.
    expect(listMembers(await readFile(file)).map((m) => m.path)).toEqual(members.map((m) => m.name));
  });

  it('says in one sentence that data with a damaged header is not a whole tar archive', () => {
    const header = encodeHeader('PROD/a', 0, 0);
    header[0] = header[0]! ^ 1;
    expect(() => listMembers(Buffer.concat([header, Buffer.alloc(1024)]))).toThrow(
      expect.objectContaining({ name: 'DepotkitError', message: 'This is not a whole tar archive: the header at byte 0 has a bad checksum.' }),
    );
  });

  it('refuses a member larger than ustar can describe', () => {
    expect(() => encodeHeader('PROD/x', MAX_MEMBER_DATA + BLOCK, 0)).toThrow(RangeError);
  });
});

describe('volume plan', () => {
  const files = [
    { path: 'PROD/metadata/a.json', size: 300 },
    { path: 'PROD/COMP/A/a.iso', size: 700_000 },
    { path: 'PROD/COMP/B/b.ova', size: 50_000 },
    { path: 'PROD/COMP/C/c.ova', size: 2_000_000 },
  ];
  const size = 256 * 1024;

  it('fills volumes up to the size, in whole blocks, and covers every byte of every file once, in order', () => {
    const plan = planVolumes(files, size);
    for (const v of plan) {
      expect(v.size).toBeLessThanOrEqual(size);
      expect(v.size % BLOCK).toBe(0);
    }
    files.forEach((f, i) => {
      const pieces = plan.flatMap((v) => v.members).filter((m) => m.fileIndex === i);
      let offset = 0;
      for (const p of pieces) {
        expect(p.fileOffset).toBe(offset);
        offset += p.length;
      }
      expect(offset).toBe(f.size);
    });
    // The 700 kB file does not fit one volume: numbered parts.
    const parts = plan
      .flatMap((v) => v.members)
      .filter((m) => m.fileIndex === 1)
      .map((m) => m.member);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts[0]).toBe('PROD/COMP/A/a.iso.part-0001');
    expect(parts.at(-1)).toBe(`PROD/COMP/A/a.iso.part-${String(parts.length).padStart(4, '0')}`);
  });

  it('moves a small file whole to the next volume instead of splitting it', () => {
    const plan = planVolumes(
      [
        { path: 'PROD/COMP/A/big', size: 240 * 1024 },
        { path: 'PROD/COMP/B/small', size: 20 * 1024 },
      ],
      size,
    );
    expect(plan).toHaveLength(2);
    expect(plan[1]!.members.map((m) => m.member)).toEqual(['PROD/COMP/B/small']);
  });

  it('numbers parts with as many digits as `cat <file>.part-*` needs to join them in order', () => {
    const plan = planVolumes([{ path: 'PROD/COMP/A/huge', size: 12_000 * 60 * 1024 }], 64 * 1024);
    const names = plan.flatMap((v) => v.members).map((m) => m.member);
    expect(names.length).toBeGreaterThan(9999);
    expect(names[0]).toBe('PROD/COMP/A/huge.part-00001');
    expect([...names].sort()).toEqual(names);
  });
});

describe('manifest checks', () => {
  const valid = {
    format: 'depotkit-pack',
    version: 1,
    packId: 'x',
    created: '2026-01-01T00:00:00Z',
    volumeSize: 65536,
    source: { catalogSha256: 'a'.repeat(64), release: '9.0' },
    volumes: [{ index: 1, name: 'depot-001-of-001.tar', size: 4096, sha256: 'b'.repeat(64) }],
    files: [
      {
        path: 'PROD/COMP/A/a.iso',
        size: 10,
        sha256: 'c'.repeat(64),
        kind: 'binary',
        mtime: 0,
        pieces: [{ volume: 1, member: 'PROD/COMP/A/a.iso', fileOffset: 0, length: 10, dataOffset: 512 }],
      },
    ],
    tree: [],
    removed: [],
  };

  it('accepts a well-formed manifest', () => {
    expect(parseManifest(JSON.stringify(valid), 'm.json').files).toHaveLength(1);
  });

  it.each([
    ['a path leaving PROD/', 'PROD/../../etc/cron.d/x'],
    ['an absolute path', '/etc/passwd'],
    ['a path outside PROD/', 'umds/x'],
    ['a path with control characters', 'PROD/COMP/A/\u001b]0;x\u0007'],
  ])('refuses %s, as a usage error', (_what, path) => {
    const bad = { ...valid, files: [{ ...valid.files[0]!, path }] };
    expect(() => parseManifest(JSON.stringify(bad), 'm.json')).toThrow(/not a plain path|control characters/);
  });

  it('holds the manifest to its schema: a field of the wrong type, or a delta base of no known kind, is refused naming it', () => {
    const negative = { ...valid, files: [{ ...valid.files[0]!, size: -1 }] };
    expect(() => parseManifest(JSON.stringify(negative), 'm.json')).toThrow(/m\.json is not a depotkit pack manifest: \/files\/0\/size must be >= 0/);
    const since = { ...valid, since: { catalogSha256: 'd'.repeat(64), kind: 'folder' } };
    expect(() => parseManifest(JSON.stringify(since), 'm.json')).toThrow(/\/since\/kind must be equal to one of the allowed values/);
  });

  it("refuses a depot's delta that names ESX metadata as its base instead of a catalog", () => {
    const since = { ...valid, since: { esxSha256: 'd'.repeat(64), kind: 'pack' } };
    expect(() => parseManifest(JSON.stringify(since), 'm.json')).toThrow(/it is a depot's delta and names no catalog it was made against/);
  });

  it('refuses pieces that do not cover a file, or lie past their volume', () => {
    const gap = { ...valid, files: [{ ...valid.files[0]!, pieces: [{ ...valid.files[0]!.pieces[0]!, fileOffset: 1 }] }] };
    expect(() => parseManifest(JSON.stringify(gap), 'm.json')).toThrow(/do not cover it in order/);
    const past = { ...valid, files: [{ ...valid.files[0]!, pieces: [{ ...valid.files[0]!.pieces[0]!, dataOffset: 4090 }] }] };
    expect(() => parseManifest(JSON.stringify(past), 'm.json')).toThrow(/past the end/);
  });
});
