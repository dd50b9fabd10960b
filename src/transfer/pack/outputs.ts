import { createPrivateKey } from 'node:crypto';
import { readFile, readdir, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import {
  PACK_FILE_SUMS_FILE,
  PACK_MANIFEST_FILE,
  PACK_MANIFEST_SIG_FILE,
  PACK_README_FILE,
  PACK_SUMS_FILE,
  PACK_VOLUME_PREFIX,
  PACK_VOLUME_SUFFIX,
} from '../../constants.js';
import { signCatalog } from '../../depot/signature.js';
import { usageError } from '../../util/errors.js';
import { exists, writeFileAtomic } from '../../util/fs.js';
import type { PackManifest } from '../format.js';
import { sha256Hex } from '../contents.js';
import { writeJsonStreamed } from '../manifest-writer.js';
import { packReadme } from '../readme.js';
import { formatPackSeal } from '../seal.js';

/**
 * The files beside the volumes (the manifest, its signature, the checksum
 * lists, the README) and what vouches for a pack apart from the media: the
 * seal a person carries, written to a file only when asked and never inside
 * the pack, and the manifest's signature by an operator's key, in the catalog
 * signature's format (docs/signature.md) over the manifest's exact bytes.
 */
export interface PackOutputs {
  seal: string;
  manifestSha256: string;
  sealFile?: string;
  signature?: { path: string; signerSpkiSha256: string };
}

/** The files of an earlier pack in `dir`, by name. */
export async function packFilesIn(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const volume = new RegExp(`^${PACK_VOLUME_PREFIX}\\d+-of-\\d+${PACK_VOLUME_SUFFIX.replace('.', '\\.')}$`);
  const own = new Set<string>([PACK_MANIFEST_FILE, PACK_MANIFEST_SIG_FILE, PACK_SUMS_FILE, PACK_FILE_SUMS_FILE, PACK_README_FILE]);
  return names.filter((n) => own.has(n) || volume.test(n)).sort();
}

/** The manifest signature needs an ECDSA P-256 key (the catalog signature's algorithm): checked before anything is written. */
export function checkSigningKey(pem: string | undefined): void {
  if (pem === undefined) return;
  let details;
  try {
    const key = createPrivateKey(pem);
    details = key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails : undefined;
  } catch {
    throw usageError(
      'The signing key is not a PEM private key.',
      'Give the private key made by depot demo (<dir>-signing/signing-key.pem) or another ECDSA P-256 key.',
    );
  }
  if (details?.namedCurve !== 'prime256v1') throw usageError('The signing key is not an ECDSA P-256 key, the only kind a pack signature uses.');
}

/** `path` with the links of the part of it that exists resolved; the part not yet made kept as given. */
async function realPathSoFar(path: string): Promise<string> {
  const missing: string[] = [];
  for (let head = resolve(path); ; head = dirname(head)) {
    try {
      return join(await realpath(head), ...missing);
    } catch {
      if (dirname(head) === head) return resolve(path);
      missing.unshift(basename(head));
    }
  }
}

/**
 * The seal file must lie off the media (a seal beside what it vouches for vouches for nothing) and not
 * replace a file unasked. Judged where each lands once links are followed: a folder that links into the
 * media is the media. The seal file's own name is not followed: the write replaces a link there.
 */
export async function checkSealFile(file: string, out: string, force: boolean): Promise<string> {
  const path = resolve(file);
  const [lands, media] = await Promise.all([realPathSoFar(dirname(path)).then((dir) => join(dir, basename(path))), realPathSoFar(out)]);
  if (lands === media || lands.startsWith(`${media}${sep}`)) {
    const via = lands === path ? '' : ` (through a link: ${lands})`;
    throw usageError(`The seal file ${path}${via} is inside the pack's folder ${out}: the seal must travel apart from the media it vouches for.`);
  }
  if (!force && (await exists(path))) throw usageError(`${path} already exists.`, 'Use `force` to replace it, or name another file.');
  return path;
}

/** Writes the files beside the volumes, SHA256SUMS last (a SHA256SUMS present means every file it names was written), then the seal file. */
export async function writePackOutputs(
  out: string,
  manifest: PackManifest,
  options: { force: boolean; signingKeyPem?: string; sealFile?: string; now?: Date },
): Promise<PackOutputs> {
  const fileSums = manifest.files
    .filter((f) => !f.catalogMismatch)
    .map((f) => `${f.sha256}  ${f.path}\n`)
    .join('');
  const readme = packReadme(manifest);
  const force = { force: options.force };
  await writeFileAtomic(join(out, PACK_FILE_SUMS_FILE), fileSums, force);
  await writeFileAtomic(join(out, PACK_README_FILE), readme, force);
  const manifestPath = join(out, PACK_MANIFEST_FILE);
  const manifestSha256 = await writeJsonStreamed(manifestPath, manifest, 1, options.force);
  const result: PackOutputs = { manifestSha256, seal: formatPackSeal(manifest.source, manifestSha256) };
  let signatureText: string | undefined;
  if (options.signingKeyPem !== undefined) {
    // The bytes written are the ones signed (read back: the text was never held whole).
    const signature = signCatalog(await readFile(manifestPath), options.signingKeyPem, options.now);
    signatureText = `${JSON.stringify(signature, null, 2)}\n`;
    await writeFileAtomic(join(out, PACK_MANIFEST_SIG_FILE), signatureText, force);
    result.signature = { path: join(out, PACK_MANIFEST_SIG_FILE), signerSpkiSha256: signature.signerSpkiSha256 };
  }
  const sums = [
    ...manifest.volumes.map((v) => `${v.sha256}  ${v.name}\n`),
    `${result.manifestSha256}  ${PACK_MANIFEST_FILE}\n`,
    ...(signatureText ? [`${sha256Hex(signatureText)}  ${PACK_MANIFEST_SIG_FILE}\n`] : []),
    `${sha256Hex(fileSums)}  ${PACK_FILE_SUMS_FILE}\n`,
    `${sha256Hex(readme)}  ${PACK_README_FILE}\n`,
  ].join('');
  await writeFileAtomic(join(out, PACK_SUMS_FILE), sums, force);
  // Never on the media: carried apart from them, the seal is what vouches for them.
  if (options.sealFile) {
    await writeFileAtomic(options.sealFile, `${result.seal}\n`, force);
    result.sealFile = options.sealFile;
  }
  return result;
}
