import { createHash } from 'node:crypto';
import { componentDir } from '../../src/constants.js';

/**
 * A catalog that names `count` tiny binaries of VCENTER, and their bodies,
 * made up on the fly (nothing on disk): for the memory of a mirror over a
 * huge catalog.
 */
export function manyTinyBinaries(count: number): { catalog: Buffer; body(path: string): Buffer | undefined } {
  const dir = `${componentDir('VCENTER')}/`;
  const bodyOf = (i: number) => Buffer.from(`tiny binary ${i}\n`);
  const binaries = Array.from({ length: count }, (_, i) => {
    const body = bodyOf(i);
    return { fileName: `tiny-${i}.bin`, size: body.length, checksum: createHash('sha256').update(body).digest('hex') };
  });
  const catalog = {
    patches: { VCENTER: [{ productVersion: '9.0.0.0.24755230', artifacts: { bundles: [{ name: 'tiny', type: 'INSTALL', binaries }] } }] },
  };
  return {
    catalog: Buffer.from(JSON.stringify(catalog)),
    body(path) {
      const m = path.startsWith(dir) ? /^tiny-(\d+)\.bin$/.exec(path.slice(dir.length)) : null;
      return m && Number(m[1]) < count ? bodyOf(Number(m[1])) : undefined;
    },
  };
}
