import { posix } from 'node:path';
import { ESX_DEPOT } from '../constants.js';
import { METADATA_LIMITS } from '../util/limits.js';
import { openZip, readEntryData, walkZip } from '../util/zip.js';
import type { EsxComponent, EsxMetadata, EsxVib } from './model.js';
import { attributeOf, children, parseXml, textOf, type XmlNode } from './xml.js';

const NOT_METADATA = 'it is not an ESX metadata zip';

/** A size as the metadata writes it, or undefined when it is not a whole number of bytes. */
function sizeOf(text: string | undefined): number | undefined {
  return text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

function sha256Of(checksums: XmlNode[], typeOf: (c: XmlNode) => string | undefined, valueOf: (c: XmlNode) => string | undefined): string | undefined {
  const found = checksums.find((c) => typeOf(c)?.toLowerCase() === ESX_DEPOT.checksumType);
  const value = found && valueOf(found)?.toLowerCase();
  return value && /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}

/** The VIBs of `vmware.xml`: in each bulletin's `<vibList>`, or in a `<vibList>` of the document itself. */
function vibsOfDocument(response: XmlNode): { vib: XmlNode; bulletin?: string }[] {
  const found: { vib: XmlNode; bulletin?: string }[] = children(children(response, 'vibList')[0], 'vib').map((vib) => ({ vib }));
  for (const bulletin of children(response, 'bulletin')) {
    const id = textOf(bulletin, 'id');
    for (const vib of children(children(bulletin, 'vibList')[0], 'vib')) found.push({ vib, bulletin: id });
  }
  return found;
}

function vibOfDocument(vib: XmlNode, folder: string): EsxVib | undefined {
  const file = children(vib, 'vibFile')[0];
  const relative = textOf(file, 'relativePath');
  if (!relative) return undefined;
  return {
    path: posix.join(folder, relative),
    id: textOf(vib, 'vibID'),
    size: sizeOf(textOf(file, 'packedSize')),
    sha256: sha256Of(
      children(file, 'checksum'),
      (c) => textOf(c, 'checksumType'),
      (c) => textOf(c, 'checksum'),
    ),
  };
}

/** A `vibs/*.xml` document: `<vib>` with `relative-path`, `packed-size` and `<checksum checksum-type=...>`. */
function vibOfVibDocument(text: string, folder: string): EsxVib | undefined {
  const vib = parseXml(text).vib;
  const relative = textOf(vib, 'relative-path');
  if (!relative) return undefined;
  return {
    path: posix.join(folder, relative),
    size: sizeOf(textOf(vib, 'packed-size')),
    sha256: sha256Of(
      children(vib, 'checksum'),
      (c) => attributeOf(c, 'checksum-type'),
      (c) => textOf(c),
    ),
  };
}

function componentsOf(response: XmlNode): EsxComponent[] {
  return children(response, 'bulletin').map((bulletin) => ({
    bulletin: textOf(bulletin, 'id') ?? '',
    name: attributeOf(children(bulletin, 'componentNameSpec')[0], 'name'),
    version: attributeOf(children(bulletin, 'componentVersionSpec')[0], 'version'),
    vibIds: children(children(bulletin, 'vibList')[0], 'vib').flatMap((vib) => textOf(vib, 'vibID') ?? textOf(vib) ?? []),
  }));
}

/**
 * What a metadata zip lists: its bulletins (components) and VIB files, with each VIB's path relative to
 * the depot (the zip's folder joined with the VIB's relative path), size and SHA-256. `vmware.xml` is
 * read first; a VIB it lists without a file is taken from `vibs/*.xml`. Read within the metadata
 * archive's limits. Throws an Error saying why when the zip is no ESX metadata.
 */
export async function readEsxMetadata(data: Buffer, path: string): Promise<EsxMetadata> {
  let zip;
  try {
    zip = await openZip(data);
  } catch (err) {
    throw new Error(`it is not a readable zip (${(err as Error).message})`);
  }
  const documents = new Map<string, string>();
  try {
    const walk = await walkZip(zip, { label: path, bytes: data.length }, METADATA_LIMITS, NOT_METADATA, (name) => {
      const wanted = name === ESX_DEPOT.metadataDocument || (name.startsWith(ESX_DEPOT.metadataVibsDir) && name.endsWith('.xml'));
      return wanted ? { name, hold: true } : undefined;
    });
    for (const { entry, name } of walk.files) documents.set(name, (await readEntryData(zip, entry)).toString('utf8'));
  } finally {
    zip.close();
  }
  const main = documents.get(ESX_DEPOT.metadataDocument);
  if (main === undefined) throw new Error(`it has no ${ESX_DEPOT.metadataDocument}`);
  const response = parseXml(main).metadataResponse as XmlNode | undefined;
  if (!response) throw new Error(`its ${ESX_DEPOT.metadataDocument} has no <metadataResponse>`);
  const folder = posix.dirname(path);
  const byPath = new Map<string, EsxVib>();
  for (const { vib } of vibsOfDocument(response)) {
    const found = vibOfDocument(vib, folder);
    if (found && !byPath.has(found.path)) byPath.set(found.path, found);
  }
  for (const [name, text] of documents) {
    if (name === ESX_DEPOT.metadataDocument) continue;
    const found = vibOfVibDocument(text, folder);
    if (!found) continue;
    const known = byPath.get(found.path);
    byPath.set(found.path, { ...found, ...known, size: known?.size ?? found.size, sha256: known?.sha256 ?? found.sha256 });
  }
  return { path, vibs: [...byPath.values()], components: componentsOf(response) };
}
