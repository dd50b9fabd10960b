import { posix } from 'node:path';
import { ESX_DEPOT } from '../constants.js';
import type { Finding } from '../util/findings.js';
import { ESX_LIMITS } from '../util/limits.js';
import { escapeControlChars } from '../util/text.js';
import { parseRootIndex, parseVendorIndex } from './indexes.js';
import { readEsxMetadata } from './metadata-zip.js';
import type { EsxMetadata, EsxProduct, EsxVendor } from './model.js';
import type { EsxSource } from './source.js';

/** What reading the chain needs of a source: a folder, a bundle, or a server. */
export type EsxReader = Pick<EsxSource, 'read'>;

/** An ESX depot's chain as read: its vendors, the products they list, and each metadata zip's contents. */
export interface EsxChain {
  /** Depot-relative path of the root index. */
  index: string;
  vendors: EsxVendor[];
  products: EsxProduct[];
  /** By depot-relative path; a zip that could not be read is absent (a finding says why). */
  metadata: Map<string, EsxMetadata>;
}

/**
 * Where a reference written in `from` points, depot-relative, as the depot's clients resolve it
 * (against the folder of the file that names it), or why it cannot be followed in the depot.
 */
export function resolveReference(from: string, reference: string): { path: string } | { outside: string } {
  if (/^[a-z][a-z0-9+.-]*:/i.test(reference)) return { outside: 'an absolute URL, not a path in the depot' };
  if (reference.startsWith('/')) return { outside: 'a path from the server root, not from the file that names it' };
  const path = posix.normalize(posix.join(posix.dirname(from), reference));
  if (path === '..' || path.startsWith('../')) return { outside: 'a path that leaves the depot' };
  return { path };
}

const finding = (id: string, severity: Finding['severity'], message: string, path: string, fix?: string, evidence?: Record<string, unknown>): Finding => ({
  id,
  severity,
  message,
  path,
  ...(evidence ? { evidence } : {}),
  ...(fix ? { fix } : {}),
});

async function readDocument<T>(
  source: EsxReader,
  path: string,
  what: string,
  parse: (text: string) => T,
  ids: { missing: string; unreadable: string },
  findings: Finding[],
): Promise<T | undefined> {
  let bytes: Buffer | undefined;
  try {
    bytes = await source.read(path, ESX_LIMITS.indexBytes);
  } catch (err) {
    findings.push(finding(ids.unreadable, 'error', `The ${what} ${path} cannot be read: ${(err as Error).message}`, path));
    return undefined;
  }
  if (bytes === undefined) {
    findings.push(finding(ids.missing, 'error', `The ${what} ${path} is missing.`, path, 'Copy the depot again from its source, whole.'));
    return undefined;
  }
  try {
    return parse(bytes.toString('utf8'));
  } catch (err) {
    findings.push(finding(ids.unreadable, 'error', `The ${what} ${path} is not one: ${escapeControlChars((err as Error).message)}.`, path));
    return undefined;
  }
}

/** Reads the chain from the root index `index` down to every metadata zip, with a finding for each link that breaks. */
export async function readEsxChain(source: EsxReader, index: string, findings: Finding[]): Promise<EsxChain> {
  const chain: EsxChain = { index, vendors: [], products: [], metadata: new Map() };
  const vendors = await readDocument(
    source,
    index,
    'root index',
    parseRootIndex,
    { missing: 'esx.index.missing', unreadable: 'esx.index.unreadable' },
    findings,
  );
  for (const vendor of vendors ?? []) {
    if (!vendor.contentTypes.includes(ESX_DEPOT.esxContentType)) continue;
    const target = resolveReference(index, posix.join(vendor.relativePath || '.', vendor.indexfile));
    if ('outside' in target || !vendor.indexfile) {
      const why = 'outside' in target ? target.outside : 'no index file';
      findings.push(finding('esx.index.outside', 'error', `The root index names the vendor index of ${vendor.name || vendor.code} as ${why}.`, index));
      continue;
    }
    chain.vendors.push({ name: vendor.name, code: vendor.code, index: target.path });
  }
  if (vendors && chain.vendors.length === 0) {
    findings.push(
      finding('esx.index.no-esx', 'error', `The root index ${index} lists no vendor with ESX content.`, index, undefined, {
        contentType: ESX_DEPOT.esxContentType,
      }),
    );
  }
  for (const vendor of chain.vendors) {
    const entries = await readDocument(
      source,
      vendor.index,
      'vendor index',
      parseVendorIndex,
      { missing: 'esx.vendor-index.missing', unreadable: 'esx.vendor-index.unreadable' },
      findings,
    );
    for (const entry of entries ?? []) {
      const target = resolveReference(vendor.index, entry.url);
      if ('outside' in target) {
        findings.push(
          finding(
            'esx.vendor-index.outside',
            'error',
            `${vendor.index} names the metadata of ${entry.productId} ${entry.version} as ${target.outside}.`,
            vendor.index,
          ),
        );
        continue;
      }
      chain.products.push({
        vendor: vendor.name || vendor.code,
        productId: entry.productId,
        version: entry.version,
        channels: entry.channels,
        metadata: target.path,
      });
    }
  }
  for (const path of new Set(chain.products.map((p) => p.metadata))) {
    const metadata = await readMetadataZip(source, path, findings);
    if (metadata) chain.metadata.set(path, metadata);
  }
  return chain;
}

/** One metadata zip read, or a finding saying why it cannot be. */
export async function readMetadataZip(source: EsxReader, path: string, findings: Finding[]): Promise<EsxMetadata | undefined> {
  let bytes: Buffer | undefined;
  try {
    bytes = await source.read(path, ESX_LIMITS.metadataZipBytes);
    if (bytes) return await readEsxMetadata(bytes, path);
  } catch (err) {
    findings.push(
      finding(
        'esx.metadata.unreadable',
        'error',
        `The metadata zip ${path} cannot be read: ${escapeControlChars((err as Error).message)}.`,
        path,
        'Copy the metadata zip again from its source.',
      ),
    );
    return undefined;
  }
  findings.push(
    finding(
      'esx.metadata.missing',
      'error',
      `The metadata zip ${path} that the vendor index lists is missing.`,
      path,
      'Copy the depot again from its source, whole.',
    ),
  );
  return undefined;
}
