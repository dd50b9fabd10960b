/**
 * The little of DER that reading a certificate needs (RFC 5280 over X.690): what node:crypto does not show
 * (version, signature algorithm, extensions) read from the bytes it has already parsed, without node-forge.
 */

/** One DER element: its tag byte and the bytes of its contents. */
export interface DerNode {
  tag: number;
  body: Buffer;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  OID: 0x06,
  SEQUENCE: 0x30,
} as const;

/** The element at `offset` and where the next one starts; throws on bytes that are not DER. */
function readNode(der: Buffer, offset: number): { node: DerNode; next: number } {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined || (tag & 0x1f) === 0x1f) throw new Error('not DER');
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4 || start + bytes > der.length) throw new Error('not DER');
    length = der.readUIntBE(start, bytes);
    start += bytes;
  }
  const end = start + length;
  if (end > der.length) throw new Error('not DER');
  return { node: { tag, body: der.subarray(start, end) }, next: end };
}

/** The one element that `der` holds. */
export function derNode(der: Buffer): DerNode {
  const { node, next } = readNode(der, 0);
  if (next !== der.length) throw new Error('not DER');
  return node;
}

/** The elements inside a constructed element (a SEQUENCE, a context tag). */
export function children(node: DerNode): DerNode[] {
  const out: DerNode[] = [];
  for (let offset = 0; offset < node.body.length;) {
    const { node: child, next } = readNode(node.body, offset);
    out.push(child);
    offset = next;
  }
  return out;
}

/** An OBJECT IDENTIFIER's dotted form. */
export function oidOf(node: DerNode): string {
  if (node.tag !== TAG.OID || node.body.length === 0) throw new Error('not an OID');
  const arcs: number[] = [];
  let value = 0;
  for (const byte of node.body) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      arcs.push(value);
      value = 0;
    }
  }
  const first = arcs.shift()!;
  return [first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80, ...arcs].join('.');
}

/** A small non-negative INTEGER (a version, a path length). */
export function smallInteger(node: DerNode): number {
  if (node.tag !== TAG.INTEGER || node.body.length === 0 || node.body.length > 4 || node.body[0]! & 0x80) throw new Error('not a small INTEGER');
  return node.body.readUIntBE(0, node.body.length);
}

export function booleanOf(node: DerNode): boolean {
  if (node.tag !== TAG.BOOLEAN || node.body.length !== 1) throw new Error('not a BOOLEAN');
  return node.body[0] !== 0;
}
