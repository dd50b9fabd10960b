import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import type { Finding } from '../../util/findings.js';
import { sha256Files } from '../../util/hash.js';
import { listFiles } from '../../util/walk.js';
import type { CatalogBinary } from '../catalog.js';
import type { SeenFile } from '../release-status.js';
import { checkWorldReadable } from './layout.js';

async function indexCompFiles(root: string): Promise<Map<string, string[]>> {
  const files = await listFiles(join(root, DEPOT_PATHS.comp));
  const index = new Map<string, string[]>();
  for (const file of files) {
    const name = basename(file);
    index.set(name, [...(index.get(name) ?? []), `${DEPOT_PATHS.comp}/${file}`]);
  }
  return index;
}

/** A binary that is not where the catalog puts it: misplaced when a file of its name is elsewhere under COMP, else missing. */
function absentFinding(root: string, binary: CatalogBinary, elsewhere: Map<string, string[]>): Finding {
  const found = (elsewhere.get(binary.fileName) ?? []).filter((p) => p !== binary.path);
  return {
    id: found.length ? 'binary.misplaced' : 'binary.missing',
    severity: 'error',
    path: binary.path,
    message: found.length
      ? `${binary.fileName} is in ${found[0]} but the catalog puts it in ${binary.path}.`
      : `${binary.path} (${binary.component} ${binary.productVersion}) is missing.`,
    evidence: { size: binary.size, checksum: binary.checksum, ...(found.length ? { foundAt: found } : {}) },
    installer: `fails the ${binary.component} download with 404`,
    fix: found.length
      ? `mv ${join(root, found[0]!)} ${join(root, binary.path)}`
      : `Download it and run \`buildDepot\` \`metadata\` <zip-or-dir> \`binaries\` <folder> \`out\` ${root} again.`,
  };
}

/** Each binary there with the catalog's size and readable; returns those that are. What was seen of each goes into `seen`. */
export async function checkBinaries(root: string, binaries: CatalogBinary[], findings: Finding[], seen: Map<string, SeenFile>): Promise<CatalogBinary[]> {
  const sized: CatalogBinary[] = [];
  let elsewhere: Map<string, string[]> | undefined;
  for (const binary of binaries) {
    const info = await stat(join(root, binary.path)).catch(() => undefined);
    if (!info?.isFile()) {
      elsewhere ??= await indexCompFiles(root);
      findings.push(absentFinding(root, binary, elsewhere));
      seen.set(binary.path, { state: 'missing' });
      continue;
    }
    if (info.size !== binary.size) {
      seen.set(binary.path, { state: 'wrong-size', actualSize: info.size });
      findings.push({
        id: 'binary.size-mismatch',
        severity: 'error',
        path: binary.path,
        message: `${binary.path} is ${info.size} bytes; the catalog says ${binary.size}${info.size < binary.size ? ' (a partial download?)' : ''}.`,
        evidence: { actual: info.size, expected: binary.size },
        fix: 'Download the file again and place it with `buildDepot`.',
      });
      continue;
    }
    try {
      await access(join(root, binary.path), fsConstants.R_OK);
    } catch {
      findings.push({
        id: 'binary.unreadable',
        severity: 'error',
        path: binary.path,
        message: `${binary.path} cannot be read by this user (the web server could not serve it).`,
        fix: `chmod a+r ${join(root, binary.path)}`,
      });
      seen.set(binary.path, { state: 'unreadable' });
      continue;
    }
    await checkWorldReadable(root, binary.path, findings);
    seen.set(binary.path, { state: 'present' });
    sized.push(binary);
  }
  return sized;
}

/** Files under the component folders that the catalog does not name: the installer never fetches them. */
export async function reportUncatalogued(root: string, binaries: CatalogBinary[], findings: Finding[]): Promise<void> {
  const named = new Set(binaries.map((b) => b.path));
  const files = await listFiles(join(root, DEPOT_PATHS.comp), { depth: 2 });
  for (const file of files) {
    const path = `${DEPOT_PATHS.comp}/${file}`;
    if (named.has(path)) continue;
    findings.push({ id: 'binary.not-in-catalog', severity: 'info', path, message: `${path} is not named in the catalog; the installer never fetches it.` });
  }
}

/** Hashes the binaries of the right size and compares each with the catalog; returns how many were hashed. */
export async function checkHashes(
  root: string,
  sized: CatalogBinary[],
  findings: Finding[],
  options: { concurrency?: number; onBytes?: (n: number) => void },
  seen: Map<string, SeenFile>,
): Promise<number> {
  const hashes = await sha256Files(
    sized.map((b) => join(root, b.path)),
    { concurrency: options.concurrency, onBytes: options.onBytes },
  );
  let hashed = 0;
  hashes.forEach((h, i) => {
    const binary = sized[i]!;
    if (h.error) {
      seen.set(binary.path, { state: 'unreadable' });
      findings.push({
        id: 'binary.unreadable',
        severity: 'error',
        path: binary.path,
        message: `${binary.path} cannot be read: ${h.error.message}.`,
        fix: `chmod a+r ${join(root, binary.path)}`,
      });
      return;
    }
    hashed++;
    if (h.sha256 !== binary.checksum) {
      seen.set(binary.path, { state: 'wrong-content', actualSha256: h.sha256 ?? '' });
      findings.push({
        id: 'binary.checksum-mismatch',
        severity: 'error',
        path: binary.path,
        message: `${binary.path} has the right size but the wrong content (SHA-256 ${h.sha256}, the catalog says ${binary.checksum}).`,
        evidence: { actual: h.sha256, expected: binary.checksum },
        fix: 'Download the file again; `buildDepot` checks it before placing it.',
      });
    }
  });
  return hashed;
}
