import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nextEntry, openZip, readEntryData } from '../../src/util/zip.js';
import { makeZip } from '../security/helpers.js';

/** The first entry's bytes, read as the metadata readers read them. */
async function readFirst(zipBytes: Buffer): Promise<Buffer> {
  const zip = await openZip(zipBytes);
  try {
    const entry = await nextEntry(zip);
    if (!entry) throw new Error('no entry');
    return await readEntryData(zip, entry);
  } finally {
    zip.close();
  }
}

/** The zip with the first central-directory record's uncompressed size set to `size` (the record the reader trusts). */
function declaring(zipBytes: Buffer, size: number): Buffer {
  const out = Buffer.from(zipBytes);
  const at = out.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  out.writeUInt32LE(size, at + 24);
  return out;
}

describe('readEntryData', () => {
  // A small text compresses well; random bytes of more than a MiB take the streamed path.
  const small = Buffer.from('<vib><relative-path>vib20/a/a.vib</relative-path></vib>\n'.repeat(200));
  const large = randomBytes(1024 * 1024 + 17);

  it('gives back every byte of a small deflated entry, a large one and a stored one', async () => {
    // Buffer.equals: a deep comparison of a MiB byte by byte takes the test runner seconds.
    expect((await readFirst(await makeZip([{ name: 'vibs/a.xml', data: small }]))).equals(small)).toBe(true);
    expect((await readFirst(await makeZip([{ name: 'big.bin', data: large }]))).equals(large)).toBe(true);
    expect((await readFirst(await makeZip([{ name: 'stored.xml', data: small, compress: false }]))).equals(small)).toBe(true);
  });

  it('refuses an entry that inflates past the size its directory record declares, or short of it', async () => {
    const zip = await makeZip([{ name: 'vibs/a.xml', data: small }]);
    await expect(readFirst(declaring(zip, 100))).rejects.toThrow(/vibs\/a\.xml does not inflate to its declared size/);
    await expect(readFirst(declaring(zip, small.length + 1))).rejects.toThrow(/vibs\/a\.xml does not inflate to its declared size/);
  });

  it('refuses a large entry whose declared size is wrong, through the stream', async () => {
    const zip = await makeZip([{ name: 'big.bin', data: large }]);
    await expect(readFirst(declaring(zip, large.length + 1))).rejects.toThrow();
  });
});
