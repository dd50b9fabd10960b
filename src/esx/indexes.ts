import { XMLBuilder } from 'fast-xml-parser';
import { ESX_DEPOT } from '../constants.js';
import { attributeOf, children, parseXml, textOf } from './xml.js';

/** A `<vendor>` of a root index, as written. */
export interface VendorEntry {
  name: string;
  code: string;
  indexfile: string;
  relativePath: string;
  /** The content types it declares (ESX content is {@link ESX_DEPOT.esxContentType}). */
  contentTypes: string[];
}

/** A `<metadata>` of a vendor index, as written. */
export interface MetadataEntry {
  productId: string;
  version: string;
  url: string;
  channels: string[];
}

/** The vendors of a root index (`<vendorList><vendor>`). Throws when the document is no root index. */
export function parseRootIndex(text: string): VendorEntry[] {
  const root = parseXml(text).vendorList;
  if (root === undefined) throw new Error('it has no <vendorList>');
  return children(root, 'vendor').map((vendor) => ({
    name: textOf(vendor, 'name') ?? '',
    code: textOf(vendor, 'code') ?? '',
    indexfile: textOf(vendor, 'indexfile') ?? '',
    relativePath: textOf(vendor, 'relativePath') ?? '',
    contentTypes: children(vendor, 'content').flatMap((content) => textOf(content, 'type') ?? []),
  }));
}

/** The metadata a vendor index lists (`<metaList><metadata>`). Throws when the document is no vendor index. */
export function parseVendorIndex(text: string): MetadataEntry[] {
  const root = parseXml(text).metaList;
  if (root === undefined) throw new Error('it has no <metaList>');
  return children(root, 'metadata').map((metadata) => ({
    productId: textOf(metadata, 'productId') ?? '',
    version: textOf(metadata, 'version') ?? '',
    url: textOf(metadata, 'url') ?? '',
    // A channel is named by an element of its own, or by an attribute on older indexes.
    channels: children(metadata, 'channelName').flatMap((c) => textOf(c) ?? attributeOf(c, 'name') ?? []),
  }));
}

const builder = new XMLBuilder({ format: true, indentBy: '  ', suppressEmptyNode: false });

/** A root index listing these vendors, each with ESX content. */
export function rootIndexXml(vendors: readonly Omit<VendorEntry, 'contentTypes'>[]): string {
  const vendor = vendors.map((v) => ({
    name: v.name,
    code: v.code,
    indexfile: v.indexfile,
    patchUrl: '',
    relativePath: v.relativePath,
    content: { name: ESX_DEPOT.esxContentName, type: ESX_DEPOT.esxContentType },
  }));
  return `<?xml version="1.0" encoding="utf-8"?>\n${builder.build({ vendorList: { vendor } })}`;
}

/** A vendor index listing these metadata zips. */
export function vendorIndexXml(entries: readonly MetadataEntry[]): string {
  const metadata = entries.map((e) => ({ productId: e.productId, version: e.version, locale: '', url: e.url, channelName: e.channels }));
  return `<?xml version="1.0" encoding="utf-8"?>\n${builder.build({ metaList: { metadata } })}`;
}
