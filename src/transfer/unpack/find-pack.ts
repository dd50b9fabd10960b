import { join } from 'node:path';
import { PACK_MANIFEST_FILE, PACK_MANIFEST_SIG_FILE, PACK_SUMS_FILE } from '../../constants.js';
import { DepotkitError, EXIT, usageError } from '../../util/errors.js';
import { PACK_LIMITS } from '../../util/limits.js';
import { type PackManifest, parseManifest } from '../format.js';
import { sha256Hex } from '../contents.js';
import { readMediaFile } from './media.js';

export interface FoundPack {
  manifest: PackManifest;
  /** Where the copy that was read lies. */
  path: string;
  /** The SHA-256 of the manifest's exact bytes: what a seal's code and a signature are over. */
  sha256: string;
  bytes: Buffer;
  /** Each depot-pack.json.sig the media carry. */
  signatures: { path: string; text: string }[];
}

interface Copy {
  path: string;
  bytes: Buffer;
  sha256: string;
}

/** The SHA-256s that SHA256SUMS lines give for the manifest. */
function manifestSums(list: string): string[] {
  const sums: string[] = [];
  for (const line of list.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (m && m[2] === PACK_MANIFEST_FILE) sums.push(m[1]!);
  }
  return sums;
}

/**
 * Finds the manifest among the media: every copy must be the same bytes, and
 * SHA256SUMS (when there) must vouch for it. The manifest, SHA256SUMS and
 * signatures are read only as regular files and within PACK_LIMITS.
 */
export async function findPack(media: readonly string[]): Promise<FoundPack> {
  const copies: Copy[] = [];
  const sums = new Set<string>();
  const signatures: FoundPack['signatures'] = [];
  for (const dir of media) {
    const path = join(dir, PACK_MANIFEST_FILE);
    const bytes = await readMediaFile(path, PACK_LIMITS.manifestBytes, 'pack manifest');
    if (bytes) copies.push({ path, bytes, sha256: sha256Hex(bytes) });
    const list = await readMediaFile(join(dir, PACK_SUMS_FILE), PACK_LIMITS.sumsBytes, 'checksum list');
    if (list) for (const sum of manifestSums(list.toString('utf8'))) sums.add(sum);
    const sigPath = join(dir, PACK_MANIFEST_SIG_FILE);
    const sig = await readMediaFile(sigPath, PACK_LIMITS.signatureBytes, 'signature');
    if (sig) signatures.push({ path: sigPath, text: sig.toString('utf8') });
  }
  if (copies.length === 0)
    throw usageError(
      `None of ${media.join(', ')} holds ${PACK_MANIFEST_FILE}.`,
      'Copy the manifest (and SHA256SUMS) onto every medium beside the volumes, or name the folder that has it.',
    );
  const vouched = sums.size ? copies.filter((c) => sums.has(c.sha256)) : copies;
  if (vouched.length === 0) {
    throw new DepotkitError(
      `${copies.map((c) => c.path).join(', ')} does not match its SHA-256 in ${PACK_SUMS_FILE}: the manifest is damaged.`,
      EXIT.problems,
      'Copy it again from the pack.',
    );
  }
  const first = vouched[0]!;
  const manifest = parseManifest(first.bytes.toString('utf8'), first.path);
  const other = vouched.find((c) => c.sha256 !== first.sha256);
  if (other) {
    const otherId = parseManifest(other.bytes.toString('utf8'), other.path).packId;
    if (otherId !== manifest.packId)
      throw usageError(`The media hold manifests of different packs (${manifest.packId}, ${otherId}): unpack one pack at a time.`);
    throw new DepotkitError(
      `${first.path} and ${other.path} are different copies of one pack's manifest: one of them was altered or damaged.`,
      EXIT.problems,
      'Copy the manifest again from the pack onto every medium.',
    );
  }
  return { manifest, path: first.path, sha256: first.sha256, bytes: first.bytes, signatures };
}
