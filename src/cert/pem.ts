import { usageError } from '../util/errors.js';
import { readFileBounded } from '../util/fs.js';
import { PEM_LIMITS } from '../util/limits.js';

/**
 * PEM handling in one place. Input may use CRLF or LF, carry stray whitespace
 * or text between blocks (openssl's "Bag Attributes", comments), and hold
 * several blocks (a chain). Output is always LF, 64-column base64, with a
 * final newline.
 */

export interface PemBlock {
  label: string;
  /** RFC 1421 headers such as `Proc-Type: 4,ENCRYPTED` (legacy encrypted keys). */
  headers: string[];
  der: Buffer;
  /** The block re-encoded canonically. */
  pem: string;
}

const BEGIN = /^-----BEGIN ([A-Z0-9 ]+)-----$/;
const END = /^-----END ([A-Z0-9 ]+)-----$/;
const BASE64_LINE = /^[A-Za-z0-9+/=]+$/;

/** The labels a private key's block may have (PKCS#8, PKCS#1, SEC 1, encrypted PKCS#8). */
export const PRIVATE_KEY_LABELS: readonly string[] = ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY', 'ENCRYPTED PRIVATE KEY'];

/** The labels of `text`'s BEGIN lines, in order, without reading the blocks: what a file holds, seen before it is parsed. */
export function pemLabels(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .flatMap((line) => BEGIN.exec(line.trim())?.[1] ?? []);
}

/** Parses every PEM block of `text`; throws one sentence on a malformed block. */
export function parsePemBlocks(text: string, source = 'The PEM text'): PemBlock[] {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trim());
  const blocks: PemBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const begin = BEGIN.exec(lines[i]!);
    if (!begin) continue;
    const label = begin[1]!;
    const headers: string[] = [];
    const body: string[] = [];
    let closed = false;
    for (i++; i < lines.length; i++) {
      const line = lines[i]!;
      const end = END.exec(line);
      if (end) {
        if (end[1] !== label) throw usageError(`${source} is malformed: a ${label} block ends with END ${end[1]}.`);
        closed = true;
        break;
      }
      if (BEGIN.test(line)) break;
      if (line === '') continue;
      if (body.length === 0 && /^[A-Za-z-]+:/.test(line)) headers.push(line);
      else if (BASE64_LINE.test(line.replace(/\s+/g, ''))) body.push(line.replace(/\s+/g, ''));
      else throw usageError(`${source} is malformed: the ${label} block holds a line that is not base64.`);
    }
    if (!closed) throw usageError(`${source} is malformed: the ${label} block has no END line.`);
    const b64 = body.join('');
    const der = Buffer.from(b64, 'base64');
    if (der.length === 0 || der.toString('base64') !== b64) {
      throw usageError(`${source} is malformed: the ${label} block's base64 is damaged.`);
    }
    blocks.push({ label, headers, der, pem: encodePem(label, der, headers) });
  }
  return blocks;
}

/** Canonical PEM of `der`: LF line ends, 64 columns, final newline. */
export function encodePem(label: string, der: Uint8Array, headers: string[] = []): string {
  const b64 = Buffer.from(der).toString('base64');
  const rows = b64.match(/.{1,64}/g) ?? [];
  const head = headers.length > 0 ? `${headers.join('\n')}\n\n` : '';
  return `-----BEGIN ${label}-----\n${head}${rows.join('\n')}\n-----END ${label}-----\n`;
}

/** The canonical PEM of every block (of `label`, when given) in `text`. */
export function splitPemBlocks(text: string, label?: string): string[] {
  return parsePemBlocks(text)
    .filter((b) => label === undefined || b.label === label)
    .map((b) => b.pem);
}

/** CRLF to LF, stray whitespace and text between blocks removed, final newline. */
export function normalizePem(text: string): string {
  const blocks = parsePemBlocks(text);
  if (blocks.length === 0) throw usageError('The text holds no PEM block (a -----BEGIN ...----- line).');
  return blocks.map((b) => b.pem).join('');
}

export interface ReadPemOptions {
  /** At most this many blocks of the wanted labels; more is refused at once. */
  maxBlocks?: number;
  /** What the file is, in that refusal (e.g. "certificate chain"). */
  what?: string;
}

/**
 * Reads the blocks labelled `label` (or one of several labels) from `path`,
 * in file order; throws one sentence when the file is missing or has none.
 * The file is read up to {@link PEM_LIMITS}: a device or a huge file is
 * refused before it fills memory, and so is a file of thousands of
 * certificates, before each is parsed and checked.
 */
export async function readPemFile(path: string, label: string | readonly string[], options: ReadPemOptions = {}): Promise<string[]> {
  return (await readPemBlocks(path, label, options)).map((b) => b.pem);
}

export async function readPemBlocks(path: string, label: string | readonly string[], options: ReadPemOptions = {}): Promise<PemBlock[]> {
  const data = await readFileBounded(path, PEM_LIMITS.maxFileBytes, 'PEM file');
  const labels = typeof label === 'string' ? [label] : label;
  const all = parsePemBlocks(data.toString('utf8'), path);
  const blocks = all.filter((b) => labels.includes(b.label));
  if (blocks.length === 0) {
    // Named for what it is, never shown: a private key given where a certificate was meant.
    const key = all.find((b) => / PRIVATE KEY$|^PRIVATE KEY$/.test(b.label));
    if (key) throw usageError(`${path} is a private key (${key.label}), not a ${labels[0]!.toLowerCase()}; its content is not shown.`);
    // A DER file starts with an ASN.1 SEQUENCE tag; say how to convert it rather than just refusing.
    const fix =
      data[0] === 0x30
        ? 'It looks like binary DER; convert it with: openssl x509 -inform DER -in FILE -out FILE.pem (openssl req or pkey for requests and keys).'
        : undefined;
    const names = labels.length > 1 ? `${labels.slice(0, -1).join(', ')} or ${labels.at(-1)}` : labels[0];
    throw usageError(`${path} holds no ${names} PEM block.`, fix);
  }
  const max = options.maxBlocks ?? PEM_LIMITS.maxBlocks;
  if (blocks.length > max) {
    throw usageError(
      `${path} holds ${blocks.length} PEM blocks, more than the ${max} depotkit reads from a ${options.what ?? 'PEM file'}.`,
      options.what === 'certificate chain' ? 'A chain holds a certificate and its few issuers; a trust bundle goes to `caPems`.' : undefined,
    );
  }
  return blocks;
}
