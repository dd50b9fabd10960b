import { createHash } from 'node:crypto';
import { usageError } from '../util/errors.js';

/**
 * The seal: what a person carries apart from the media (a change ticket, a
 * phone call) so that media whose catalog and binaries were both replaced are
 * refused. The catalog names every binary's SHA-256, so vouching for the
 * catalog's bytes vouches for the binaries; a pack's seal also vouches for
 * its manifest (where the bytes are).
 *
 * Each part is the first 125 bits of a SHA-256 in Crockford's base32: 25
 * characters in groups of five, no letters that read alike (I, L, O, U), case
 * and dashes ignored when read back. 125 bits keep a forgery (a second
 * catalog with the same code) far out of reach while staying short enough to
 * read aloud.
 */
export interface Seal {
  /** The catalog's code (25 characters, no dashes). */
  catalog: string;
  /** The pack manifest's code, in a pack's seal. */
  manifest?: string;
}

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 25;
const GROUP = 5;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** The code of a SHA-256 given in hex, grouped for reading: `7Q2MX-0F3KD-...`. */
export function sealCode(sha256Hex: string): string {
  const bits = BigInt(`0x${sha256Hex}`) >> BigInt(256 - CODE_LENGTH * 5);
  let code = '';
  for (let i = CODE_LENGTH - 1; i >= 0; i--) code += ALPHABET[Number((bits >> BigInt(i * 5)) & 31n)];
  return code.match(new RegExp(`.{${GROUP}}`, 'g'))!.join('-');
}

/** The seal a person writes down: `catalog <code>` and, for a pack, `manifest <code>`. */
export function formatSeal(digests: { catalogSha256: string; manifestSha256?: string }): string {
  const parts = [`catalog ${sealCode(digests.catalogSha256)}`];
  if (digests.manifestSha256) parts.push(`manifest ${sealCode(digests.manifestSha256)}`);
  return parts.join(' ');
}

/** One code as typed: case, dashes and spaces ignored, I and L read as 1, O as 0; or a whole SHA-256 in hex. */
function normalizeCode(text: string, what: string): string {
  if (HEX_SHA256.test(text)) return sealCode(text).replaceAll('-', '');
  const code = text.toUpperCase().replace(/[\s-]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
  if (code.length !== CODE_LENGTH || [...code].some((c) => !ALPHABET.includes(c)))
    throw usageError(`The ${what} code "${text}" is not a seal code: it has 25 characters of 0-9 and A-Z without I, L, O and U, in groups of five.`);
  return code;
}

/**
 * Reads a seal as a person copies it: `catalog <code> manifest <code>`, or a
 * catalog code alone (what a mirror can be held to), codes or whole SHA-256s.
 */
export function parseSeal(text: string): Seal {
  const trimmed = text.trim();
  const labelled = /^catalog[\s:=]+(.+?)(?:[\s,;]+manifest[\s:=]+(.+))?$/i.exec(trimmed);
  if (labelled) {
    return { catalog: normalizeCode(labelled[1]!, 'catalog'), ...(labelled[2] ? { manifest: normalizeCode(labelled[2], 'manifest') } : {}) };
  }
  if (/manifest/i.test(trimmed)) throw usageError(`The seal "${trimmed}" names a manifest but no catalog: copy the whole seal, "catalog ... manifest ...".`);
  return { catalog: normalizeCode(trimmed, 'catalog') };
}

export interface SealCheck {
  ok: boolean;
  /** What did not match: the catalog, the ESX metadata, the manifest, or a pack seal held to something that has no manifest. */
  mismatch?: 'catalog' | 'esx' | 'manifest';
}

/** Holds what arrived to the seal: every code the seal carries must match. */
export function checkSeal(seal: Seal, actual: { catalogSha256: string; manifestSha256?: string }): SealCheck {
  if (sealCode(actual.catalogSha256).replaceAll('-', '') !== seal.catalog) return { ok: false, mismatch: 'catalog' };
  if (seal.manifest !== undefined) {
    if (!actual.manifestSha256 || sealCode(actual.manifestSha256).replaceAll('-', '') !== seal.manifest) return { ok: false, mismatch: 'manifest' };
  }
  return { ok: true };
}

/**
 * An ESX depot's seal, `esx <code>`: the code of the SHA-256 of its chain, every root and vendor index and
 * metadata zip (a line `<sha256>  <path>` each, by path relative to the depot's folder). The metadata zips
 * name every VIB's SHA-256, so the code vouches for the whole depot, as a catalog's does for its binaries.
 */
export function esxChainSha256(documents: ReadonlyMap<string, Buffer>): string {
  return esxContentSha256([...documents].map(([path, bytes]) => ({ path, sha256: createHash('sha256').update(bytes).digest('hex') })));
}

/** The SHA-256 of files named by their own: a line `<sha256>  <path>` each, sorted, as `sha256sum` writes them. */
export function esxContentSha256(files: readonly { path: string; sha256: string }[]): string {
  const lines = files.map((f) => `${f.sha256}  ${f.path}\n`);
  return createHash('sha256').update(lines.sort().join('')).digest('hex');
}

export const formatEsxSeal = (chainSha256: string): string => `esx ${sealCode(chainSha256)}`;

/** Reads an ESX seal as a person copies it: `esx <code>`, the code alone, or a whole SHA-256; the code, without dashes. */
export function parseEsxSeal(text: string): string {
  const trimmed = text.trim();
  if (/^(catalog|manifest)\b/i.test(trimmed)) throw usageError(`The seal "${trimmed}" is a depot's or a pack's; an ESX depot's reads "esx <code>".`);
  return normalizeCode(trimmed.replace(/^esx[\s:=]+/i, ''), 'ESX');
}

/** A pack's seal: `catalog <code>` for a depot's, `esx <code>` for ESX depots alone, then `manifest <code>`. */
export function formatPackSeal(source: { catalogSha256: string } | { esxSha256: string }, manifestSha256: string): string {
  if ('esxSha256' in source) return `${formatEsxSeal(source.esxSha256)} manifest ${sealCode(manifestSha256)}`;
  return formatSeal({ catalogSha256: source.catalogSha256, manifestSha256 });
}

/**
 * Holds a pack to the seal given, as a person copied it: a depot's pack to `catalog <code> manifest <code>`
 * (or the catalog's code alone), a pack of ESX depots alone to `esx <code> manifest <code>` (or the ESX
 * code alone). A seal of the other kind does not match.
 */
export function checkPackSeal(text: string, actual: ({ catalogSha256: string } | { esxSha256: string }) & { manifestSha256: string }): SealCheck {
  const trimmed = text.trim();
  const esx = /^esx[\s:=]+(.+?)(?:[\s,;]+manifest[\s:=]+(.+))?$/i.exec(trimmed);
  if (!('esxSha256' in actual)) {
    if (esx) return { ok: false, mismatch: 'catalog' };
    return checkSeal(parseSeal(trimmed), actual);
  }
  if (!esx) {
    parseSeal(trimmed); // A malformed seal is bad input; a depot's seal is only another pack's.
    return { ok: false, mismatch: 'esx' };
  }
  if (normalizeCode(esx[1]!, 'ESX') !== sealCode(actual.esxSha256).replaceAll('-', '')) return { ok: false, mismatch: 'esx' };
  if (esx[2] !== undefined && normalizeCode(esx[2], 'manifest') !== sealCode(actual.manifestSha256).replaceAll('-', ''))
    return { ok: false, mismatch: 'manifest' };
  return { ok: true };
}
