import { createCipheriv, createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { XMLBuilder } from 'fast-xml-parser';
import yazl from 'yazl';
import { ESX_DEPOT } from '../constants.js';
import { usageError } from '../util/errors.js';
import { exists, writeFileAtomic } from '../util/fs.js';
import { rootIndexXml, vendorIndexXml } from './indexes.js';

export interface EsxDemoOptions {
  /** VIB files to make (spread over three components); default 6. */
  vibs?: number;
  /** Bytes of each VIB's payload; default 64 KiB. */
  vibSize?: number;
  /** With it, each VIB's payload is of its own size from `vibSize` to this, spread evenly on a log scale (as real VIBs are: many small, a few large). */
  vibSizeMax?: number;
  /**
   * A later patch's demo: its VIBs numbered from this one on (default 1), in its own metadata zip (`metadata`). A VIB
   * keeps its bytes from patch to patch; those below `firstVib` are no longer listed, as a patch that drops them.
   */
  firstVib?: number;
  /** The metadata zip's file name (default the demo's), which the vendor index names. */
  metadata?: string;
  force?: boolean;
}

export interface EsxDemoResult {
  dir: string;
  /** Depot-relative path of the root index. */
  index: string;
  metadata: string;
  products: { productId: string; version: string }[];
  vibs: number;
  bytes: number;
}

export const ESX_DEMO_DEFAULTS = { vibs: 6, vibSize: 64 * 1024 } as const;

/** The demo's vendor and version: clearly not the vendor's, so that nobody takes its VIBs for real ones. */
const DEMO = {
  vendor: 'depotkit demo',
  code: 'dkd',
  version: '9.0.0',
  build: '0.0.24755229',
  metadata: 'depotkit-demo-ESXi-9.0.0-metadata.zip',
  components: ['DEMO-ESXi', 'DEMO-nic-driver', 'DEMO-host-tools'],
} as const;

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, indentBy: '  ' });

/** A VIB is an `ar` archive; this one holds a descriptor that says what it is, and a payload of `size` bytes. */
function vibBytes(name: string, version: string, size: number): Buffer {
  const descriptor = Buffer.from(
    builder.build({ vib: { '@version': '5.0', type: 'bootbank', name, version, vendor: DEMO.vendor, summary: 'depotkit demo VIB: not installable' } }),
  );
  // Bytes of its own per VIB, so that a VIB put in another's place fails its checksum: a keystream keyed by its name (fast for GBs of demo).
  const key = createHash('sha256').update(name).digest();
  const payload = createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
  const member = (file: string, data: Buffer): Buffer => {
    const header = `${`${file}/`.padEnd(16)}${'0'.padEnd(12)}${'0'.padEnd(6)}${'0'.padEnd(6)}${'100644'.padEnd(8)}${String(data.length).padEnd(10)}\`\n`;
    return Buffer.concat([Buffer.from(header, 'latin1'), data, data.length % 2 ? Buffer.from('\n') : Buffer.alloc(0)]);
  };
  return Buffer.concat([Buffer.from('!<arch>\n'), member('descriptor.xml', descriptor), member('payload1', payload)]);
}

interface DemoVib {
  id: string;
  name: string;
  version: string;
  component: string;
  path: string;
  size: number;
  sha256: string;
}

/** The payload size of VIB `i`: `size`, or with `max` one of its own from `size` to `max` on a log scale. */
function payloadSize(i: number, count: number, size: number, max: number | undefined): number {
  if (max === undefined || count === 1) return size;
  // A fixed shuffle of the indexes, so that sizes do not grow with the name.
  const at = (i * 7919) % count;
  return Math.round(Math.max(size, 1) * (max / Math.max(size, 1)) ** (at / (count - 1)));
}

/** Each VIB's bytes are made once, written, and let go: only their size and SHA-256 are held, so a demo of GBs fits in memory. */
function demoVibs(count: number, first: number, size: number, max: number | undefined): (DemoVib & { bytes: () => Buffer })[] {
  return Array.from({ length: count }, (_, i) => {
    // By its number, not its place, so that a later patch's VIB of the same number is the same VIB.
    const component = DEMO.components[(first - 1 + i) % DEMO.components.length]!;
    const name = `${component.toLowerCase()}-${String(first + i).padStart(4, '0')}`;
    const version = `${DEMO.version}-${DEMO.build}`;
    const id = `DKD_bootbank_${name}_${version}`;
    const bytes = () => vibBytes(name, version, payloadSize(i, count, size, max));
    return { id, name, version, component, path: `${ESX_DEPOT.vibDir}/${name}/${id}.vib`, bytes, size: 0, sha256: '' };
  });
}

function vmwareXml(vibs: readonly DemoVib[]): string {
  const bulletin = DEMO.components.map((component) => ({
    id: `${component}_${DEMO.version}-${DEMO.build}`,
    vendor: DEMO.vendor,
    summary: `depotkit demo component ${component}: not installable`,
    componentNameSpec: { '@name': component, '@uiString': component },
    componentVersionSpec: { '@version': `${DEMO.version}-${DEMO.build}`, '@uiString': DEMO.version },
    vibList: {
      vib: vibs
        .filter((v) => v.component === component)
        .map((v) => ({
          vibID: v.id,
          name: v.name,
          version: v.version,
          vendor: DEMO.vendor,
          vibFile: { sourceUrl: '', relativePath: v.path, packedSize: v.size, checksum: { checksumType: ESX_DEPOT.checksumType, checksum: v.sha256 } },
        })),
    },
  }));
  return `<?xml version="1.0" encoding="utf-8"?>\n${builder.build({ metadataResponse: { version: '3.0', timestamp: '2025-06-17T00:00:00', bulletin } })}`;
}

function vibXml(vib: DemoVib): string {
  return builder.build({
    vib: {
      '@version': '5.0',
      type: 'bootbank',
      name: vib.name,
      version: vib.version,
      vendor: DEMO.vendor,
      'relative-path': vib.path,
      'packed-size': vib.size,
      checksum: { '@checksum-type': ESX_DEPOT.checksumType, '#text': vib.sha256 },
    },
  });
}

async function metadataZip(vibs: readonly DemoVib[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const mtime = new Date('2025-06-17T00:00:00Z');
  zip.addBuffer(Buffer.from(vmwareXml(vibs)), ESX_DEPOT.metadataDocument, { mtime });
  for (const vib of vibs) zip.addBuffer(Buffer.from(vibXml(vib)), `${ESX_DEPOT.metadataVibsDir}${vib.id}.xml`, { mtime });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Writes a small ESX depot into `dir` for rehearsals and tests: a root index, a vendor index listing
 * ESXi and ESXi-on-DPU 9.x, one metadata zip and its VIBs. Every name says demo, and the VIBs
 * hold a payload no host would install.
 */
export async function makeEsxDemo(dir: string, options: EsxDemoOptions = {}): Promise<EsxDemoResult> {
  const count = options.vibs ?? ESX_DEMO_DEFAULTS.vibs;
  const size = options.vibSize ?? ESX_DEMO_DEFAULTS.vibSize;
  if (!Number.isSafeInteger(count) || count < 1 || count > 100_000)
    throw usageError(`The number of demo VIBs must be a whole number from 1 to 100000, not ${count}.`);
  if (!Number.isSafeInteger(size) || size < 0) throw usageError(`The size of each demo VIB must be a whole number of bytes, not ${size}.`);
  const max = options.vibSizeMax;
  const first = options.firstVib ?? 1;
  if (!Number.isSafeInteger(first) || first < 1 || first > 1_000_000)
    throw usageError(`The number of the first demo VIB must be a whole number from 1 to 1000000, not ${first}.`);
  const metadataName = options.metadata ?? DEMO.metadata;
  if (!/^[\w.-]+\.zip$/.test(metadataName)) throw usageError(`The demo's metadata zip must be a plain file name ending in .zip, not "${metadataName}".`);
  if (max !== undefined && (!Number.isSafeInteger(max) || max < size))
    throw usageError(`The size of the largest demo VIB must be a whole number of bytes from that of the smallest (${size}) up, not ${max}.`);
  const root = resolve(dir);
  const index = ESX_DEPOT.rootIndexNames[0];
  if (!options.force && (await exists(join(root, index)))) throw usageError(`${join(root, index)} already exists.`, 'Use `force` to replace it.');
  const vibs = demoVibs(count, first, size, max);
  const write = (path: string, data: string | Buffer) => writeFileAtomic(join(root, path), data, { force: true });
  // VIBs first and the root index last: a run cut short leaves no index that names missing files.
  for (const vib of vibs) {
    const bytes = vib.bytes();
    vib.size = bytes.length;
    vib.sha256 = createHash('sha256').update(bytes).digest('hex');
    await write(vib.path, bytes);
  }
  await write(metadataName, await metadataZip(vibs));
  const products = ESX_DEPOT.productIds.map((productId) => ({ productId, version: '9.*' }));
  await write('vendor-index.xml', vendorIndexXml(products.map((p) => ({ ...p, url: metadataName, channels: ['default'] }))));
  await write(index, rootIndexXml([{ name: DEMO.vendor, code: DEMO.code, indexfile: 'vendor-index.xml', relativePath: '' }]));
  return { dir: root, index, metadata: metadataName, products, vibs: vibs.length, bytes: vibs.reduce((sum, v) => sum + v.size, 0) };
}
