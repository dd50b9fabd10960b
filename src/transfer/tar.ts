/**
 * POSIX ustar headers (IEEE Std 1003.1-2001, "pax" interchange format), written
 * and read back by hand: the format is small, and every tar (GNU, bsdtar,
 * busybox, 7-Zip) reads it. A name longer than ustar holds gets a pax extended
 * header (`x`) carrying `path=`, which those readers also honour.
 */
import { DepotkitError, EXIT } from '../util/errors.js';

export const BLOCK = 512;
/** The end of an archive: two zero blocks. */
export const END_OF_ARCHIVE = 2 * BLOCK;
/** ustar's size field holds 11 octal digits: a member is at most 8 GiB - 1 byte; pieces stay a block below. */
export const MAX_MEMBER_DATA = 8 * 1024 ** 3 - BLOCK;

const NAME_BYTES = 100;
const PREFIX_BYTES = 155;

export function roundUpToBlock(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}

/** Splits a name into ustar's prefix and name fields, or undefined when it does not fit. */
function splitName(path: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(path) <= NAME_BYTES) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= PREFIX_BYTES && Buffer.byteLength(name) <= NAME_BYTES && name.length > 0) return { prefix, name };
  }
  return undefined;
}

/** A pax record: `<length> <key>=<value>\n`, the length counting itself. */
function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(body);
  let length = base + String(base).length;
  // Adding the digits may add a digit (e.g. 98 + 2 = 100).
  if (String(length).length !== String(base).length) length = base + String(length).length;
  return Buffer.from(`${length}${body}`);
}

/** Bytes of headers a member named `path` takes (its own header, and a pax header when the name needs one). */
export function headerBytes(path: string): number {
  if (splitName(path)) return BLOCK;
  return BLOCK + BLOCK + roundUpToBlock(paxRecord('path', path).length);
}

/** Bytes a member takes in a volume: headers and data padded to whole blocks. */
export function memberBytes(path: string, size: number): number {
  return headerBytes(path) + roundUpToBlock(size);
}

function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  // width - 1 digits and a NUL, as GNU tar and the standard's examples write them.
  block.write(value.toString(8).padStart(width - 1, '0'), offset, width - 1, 'ascii');
  block[offset + width - 1] = 0;
}

function rawHeader(name: string, prefix: string, size: number, mtimeSeconds: number, type: string): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, NAME_BYTES, 'utf8');
  writeOctal(block, 100, 8, 0o644);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, Math.max(0, Math.floor(mtimeSeconds)));
  block.write(type, 156, 1, 'ascii');
  block.write('ustar\0', 257, 6, 'ascii');
  block.write('00', 263, 2, 'ascii');
  block.write(prefix, 345, PREFIX_BYTES, 'utf8');
  // The checksum is computed with its own field read as eight spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0'), 148, 6, 'ascii');
  block[154] = 0;
  block[155] = 0x20;
  return block;
}

/** The header blocks of a regular-file member (with a pax header first when the name needs one). */
export function encodeHeader(path: string, size: number, mtimeSeconds: number): Buffer {
  if (size < 0 || size > MAX_MEMBER_DATA) throw new RangeError(`a tar member holds 0 to ${MAX_MEMBER_DATA} bytes, not ${size}`);
  const split = splitName(path);
  if (split) return rawHeader(split.name, split.prefix, size, mtimeSeconds, '0');
  const record = paxRecord('path', path);
  // The plain header keeps the name's tail, which a reader without pax support shows.
  const fallback = Buffer.from(path)
    .subarray(-NAME_BYTES)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
  const pax = rawHeader('PaxHeaders/path', '', record.length, mtimeSeconds, 'x');
  const paxData = Buffer.alloc(roundUpToBlock(record.length));
  record.copy(paxData);
  return Buffer.concat([pax, paxData, rawHeader(fallback, '', size, mtimeSeconds, '0')]);
}

export interface ParsedMember {
  path: string;
  size: number;
  /** Offset of the member's data in the archive. */
  dataOffset: number;
}

function readString(block: Buffer, offset: number, width: number): string {
  const field = block.subarray(offset, offset + width);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? width : end).toString('utf8');
}

function readOctal(block: Buffer, offset: number, width: number): number {
  return parseInt(readString(block, offset, width).trim() || '0', 8);
}

/** Whether a header block's checksum is right (a torn or overwritten header fails it). */
function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum === readOctal(block, 148, 8);
}

/**
 * Lists the members of an archive held in `data` (tests, and a look at a
 * volume's first blocks); stops at the end-of-archive blocks.
 */
export function listMembers(data: Buffer): ParsedMember[] {
  const members: ParsedMember[] = [];
  let offset = 0;
  let paxPath: string | undefined;
  while (offset + BLOCK <= data.length) {
    const block = data.subarray(offset, offset + BLOCK);
    if (block.every((b) => b === 0)) break;
    if (!checksumOk(block)) throw new DepotkitError(`This is not a whole tar archive: the header at byte ${offset} has a bad checksum.`, EXIT.problems);
    const size = readOctal(block, 124, 12);
    const type = String.fromCharCode(block[156]!);
    const dataOffset = offset + BLOCK;
    if (type === 'x') {
      const text = data.subarray(dataOffset, dataOffset + size).toString('utf8');
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(text)?.[1];
    } else {
      const prefix = readString(block, 345, PREFIX_BYTES);
      const name = readString(block, 0, NAME_BYTES);
      members.push({ path: paxPath ?? (prefix ? `${prefix}/${name}` : name), size, dataOffset });
      paxPath = undefined;
    }
    offset = dataOffset + roundUpToBlock(size);
  }
  return members;
}
