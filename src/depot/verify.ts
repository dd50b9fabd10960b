import { constants as fsConstants } from 'node:fs';
import { access, readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import fg from 'fast-glob';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, KNOWN_COMPONENTS, REQUIRED_COMPONENTS, TEMP_PREFIX, componentsOf } from '../constants.js';
import { usageError } from '../util/errors.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { exists, isDirectory } from '../util/fs.js';
import { sha256Files } from '../util/hash.js';
import { closestName } from '../util/text.js';
import { type Catalog, type CatalogBinary, CatalogError, catalogBinaries, catalogRelease, parseCatalog } from './catalog.js';
import { checkHclContent } from './hcl.js';
import { suggestComponent } from './names.js';
import { parseSignatureFile, verifyCatalogSignature } from './signature.js';

export interface VerifyOptions {
  /** Hash every binary and compare with the catalog. */
  deep?: boolean;
  /** PEM public key or certificate that signed a toolkit-made catalog. */
  signingCertPem?: string;
  concurrency?: number;
  now?: Date;
  /** Total bytes to hash, announced before `onBytes` starts counting (for a progress bar). */
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface VerifyResult {
  dir: string;
  ok: boolean;
  findings: Finding[];
  stats: { binaries: number; present: number; bytes: number; hashed: number };
}

const REQUIRED_FILES: { path: string; what: string }[] = [
  { path: DEPOT_PATHS.catalog, what: 'product version catalog' },
  { path: DEPOT_PATHS.catalogSig, what: 'catalog signature' },
  { path: DEPOT_PATHS.manifest, what: 'manifest' },
  { path: DEPOT_PATHS.hclAll, what: 'vSAN HCL' },
  { path: DEPOT_PATHS.hclLastUpdated, what: 'vSAN HCL last-updated time' },
  { path: DEPOT_PATHS.compatibility, what: 'Compatibility data' },
];

async function readJson(root: string, path: string, findings: Finding[], idPrefix: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(root, path), 'utf8');
  } catch {
    return undefined; // reported as a missing file already
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    findings.push({
      id: `${idPrefix}.json.invalid`,
      severity: 'error',
      path,
      message: `${path} is not valid JSON: ${(err as Error).message}.`,
      fix: 'Copy it again from the vendor metadata.',
    });
    return undefined;
  }
}

/** Checks a depot tree the way the installer and its downloads will need it. */
/**
 * A depot folder that is not there: one fix, the likeliest. A misspelt name
 * beside a depot is that depot; otherwise the folder is simply missing.
 */
async function notADepotFolder(root: string): Promise<Error> {
  if (await exists(root)) return usageError(`${root} is a file; give the depot root: the folder that contains ${DEPOT_ROOT_DIR}/.`);
  const siblings = await readdir(dirname(root), { withFileTypes: true }).catch(() => []);
  const meant = closestName(
    basename(root),
    siblings.filter((e) => e.isDirectory()).map((e) => e.name),
  );
  if (meant !== undefined && (await isDirectory(join(dirname(root), meant, DEPOT_ROOT_DIR))))
    return usageError(`${root} does not exist.`, `Did you mean ${join(dirname(root), meant)}?`);
  return usageError(`${root} does not exist.`, `Give the depot root: the folder that contains ${DEPOT_ROOT_DIR}/.`);
}

/** What to do about a folder without PROD/: rename a misspelt one, or go to the folder below that has it, or make a depot. */
async function missingRootFix(root: string): Promise<string> {
  const entries = (await readdir(root, { withFileTypes: true }).catch(() => [])).filter((e) => e.isDirectory());
  const misspelt = closestName(
    DEPOT_ROOT_DIR,
    entries.map((e) => e.name),
  );
  if (misspelt !== undefined) return `Rename ${join(root, misspelt)} to ${join(root, DEPOT_ROOT_DIR)}: the installer asks for /${DEPOT_ROOT_DIR}/ exactly.`;
  for (const e of entries)
    if (await isDirectory(join(root, e.name, DEPOT_ROOT_DIR))) return `Run the command on ${join(root, e.name)}, which holds ${DEPOT_ROOT_DIR}/.`;
  return `Point at the folder that contains ${DEPOT_ROOT_DIR}/; to make one, use depotkit depot build (or depotkit depot demo for a lab).`;
}

export async function verifyDepot(dir: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const root = resolve(dir);
  const findings: Finding[] = [];
  const stats = { binaries: 0, present: 0, bytes: 0, hashed: 0 };
  const result = () => ({ dir: root, ok: !hasErrors(findings), findings, stats });

  if (!(await isDirectory(root))) throw await notADepotFolder(root);
  if (!(await isDirectory(join(root, DEPOT_ROOT_DIR)))) {
    if (basename(root) === DEPOT_ROOT_DIR) {
      findings.push({
        id: 'layout.root.is-prod',
        severity: 'error',
        path: root,
        message: `${root} is the ${DEPOT_ROOT_DIR} folder itself; the depot root is the folder that contains it.`,
        fix: `Run the command on ${resolve(root, '..')}.`,
      });
    } else {
      findings.push({
        id: 'layout.root.missing',
        severity: 'error',
        path: root,
        message: `${root} has no ${DEPOT_ROOT_DIR}/ folder.`,
        fix: await missingRootFix(root),
      });
    }
    return result();
  }

  for (const file of REQUIRED_FILES) {
    try {
      await access(join(root, file.path), fsConstants.R_OK);
      await checkWorldReadable(root, file.path, findings);
    } catch (err) {
      const denied = (err as NodeJS.ErrnoException).code === 'EACCES';
      findings.push({
        id: denied ? 'layout.file.unreadable' : 'layout.file.missing',
        severity: 'error',
        path: file.path,
        message: denied ? `The ${file.what} ${file.path} cannot be read.` : `The ${file.what} ${file.path} is missing.`,
        fix: denied
          ? `chmod a+r ${join(root, file.path)}`
          : "Lay out the vendor's whole metadata archive with `depotkit depot build --metadata <zip>` (download it again if it lacks this file).",
      });
    }
  }

  const catalogPath = join(root, DEPOT_PATHS.catalog);
  let catalog: Catalog | undefined;
  let catalogBytes: Buffer | undefined;
  try {
    catalogBytes = await readFile(catalogPath);
    catalog = parseCatalog(catalogBytes.toString('utf8'), DEPOT_PATHS.catalog);
  } catch (err) {
    if (err instanceof CatalogError) {
      findings.push({ id: `catalog.${err.kind}.invalid`, severity: 'error', path: DEPOT_PATHS.catalog, message: err.message, fix: err.hint });
    }
  }

  // The folders the installer needs depend on the release (9.1 has no VRSLCM).
  const release = catalog ? catalogRelease(catalog) : '9.0';
  await checkComponentFolders(
    root,
    REQUIRED_COMPONENTS.filter((c) => componentsOf(release).includes(c)),
    findings,
  );
  await checkTempFiles(root, findings);

  await readJson(root, DEPOT_PATHS.manifest, findings, 'manifest');
  await readJson(root, DEPOT_PATHS.compatibility, findings, 'compatibility');
  await checkHcl(root, findings, options.now ?? new Date());
  if (catalogBytes) await checkSignature(root, catalogBytes, findings, options.signingCertPem);

  if (catalog) {
    const binaries = catalogBinaries(catalog);
    stats.binaries = binaries.length;
    const sized = await checkBinaries(root, binaries, findings);
    stats.present = sized.length;
    stats.bytes = sized.reduce((sum, b) => sum + b.size, 0);
    await reportUncatalogued(root, binaries, findings);
    if (options.deep && sized.length > 0) {
      options.onStart?.(stats.bytes);
      const hashes = await sha256Files(
        sized.map((b) => join(root, b.path)),
        { concurrency: options.concurrency, onBytes: options.onBytes },
      );
      hashes.forEach((h, i) => {
        const binary = sized[i]!;
        if (h.error) {
          findings.push({
            id: 'binary.unreadable',
            severity: 'error',
            path: binary.path,
            message: `${binary.path} cannot be read: ${h.error.message}.`,
            fix: `chmod a+r ${join(root, binary.path)}`,
          });
          return;
        }
        stats.hashed++;
        if (h.sha256 !== binary.checksum) {
          findings.push({
            id: 'binary.checksum-mismatch',
            severity: 'error',
            path: binary.path,
            message: `${binary.path} has the right size but the wrong content (SHA-256 ${h.sha256}, the catalog says ${binary.checksum}).`,
            evidence: { actual: h.sha256, expected: binary.checksum },
            fix: 'Download the file again; `depotkit depot build` checks it before placing it.',
          });
        }
      });
    }
  }
  return result();
}

async function checkComponentFolders(root: string, required: readonly string[], findings: Finding[]): Promise<void> {
  let entries: string[] = [];
  try {
    entries = (await readdir(join(root, DEPOT_PATHS.comp), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    findings.push({
      id: 'layout.comp.missing',
      severity: 'error',
      path: DEPOT_PATHS.comp,
      message: `${DEPOT_PATHS.comp}/ is missing.`,
      fix: 'Build the tree with `depotkit depot build`.',
    });
    return;
  }
  const misspeltFor = new Map<string, string>();
  for (const name of entries) {
    if (KNOWN_COMPONENTS.includes(name)) continue;
    const suggestion = suggestComponent(name);
    if (suggestion) {
      misspeltFor.set(suggestion, name);
      findings.push({
        id: 'layout.component.misspelt',
        severity: 'error',
        path: `${DEPOT_PATHS.comp}/${name}`,
        message: `Component folder ${name} is misspelt: the installer looks for ${suggestion}.`,
        evidence: { found: name, expected: suggestion },
        installer: `fetches ${DEPOT_PATHS.comp}/${suggestion}/... and gets 404`,
        fix: `mv ${join(root, DEPOT_PATHS.comp, name)} ${join(root, DEPOT_PATHS.comp, suggestion)}`,
      });
    } else {
      findings.push({
        id: 'layout.component.unknown',
        severity: 'warning',
        path: `${DEPOT_PATHS.comp}/${name}`,
        message: `Folder ${name} is not a component the installer knows.`,
      });
    }
  }
  for (const name of required) {
    if (entries.includes(name) || misspeltFor.has(name)) continue;
    findings.push({
      id: 'layout.component.missing',
      severity: 'error',
      path: `${DEPOT_PATHS.comp}/${name}`,
      message: `The required component folder ${name} is missing.`,
      fix: 'Add its binaries with `depotkit depot build`.',
    });
  }
}

async function checkTempFiles(root: string, findings: Finding[]): Promise<void> {
  const leftovers = await fg(`**/${TEMP_PREFIX}*`, { cwd: join(root, DEPOT_ROOT_DIR), dot: true, onlyFiles: true, suppressErrors: true });
  for (const file of leftovers) {
    const path = `${DEPOT_ROOT_DIR}/${file}`;
    findings.push({
      id: 'layout.temp-file',
      severity: 'warning',
      path,
      message: `${path} is a partial file left by an interrupted run.`,
      fix: `rm ${join(root, path)} (or run the build again, which replaces it)`,
    });
  }
}

async function checkHcl(root: string, findings: Finding[], now: Date): Promise<void> {
  const all = await readJson(root, DEPOT_PATHS.hclAll, findings, 'hcl');
  const last = await readJson(root, DEPOT_PATHS.hclLastUpdated, findings, 'hcl');
  findings.push(...checkHclContent(all, last, now));
}

async function checkSignature(root: string, catalogBytes: Buffer, findings: Finding[], signingCertPem?: string): Promise<void> {
  let sigText: string;
  try {
    sigText = await readFile(join(root, DEPOT_PATHS.catalogSig), 'utf8');
  } catch {
    return; // reported as a missing file already
  }
  const path = DEPOT_PATHS.catalogSig;
  let own;
  try {
    own = parseSignatureFile(sigText);
  } catch (err) {
    findings.push({ id: 'signature.malformed', severity: 'error', path, message: (err as Error).message });
    return;
  }
  if (!own) {
    findings.push({
      id: 'signature.vendor',
      severity: 'info',
      path,
      message: "The catalog signature is the vendor's (its format is not public): it is kept byte for byte and not checked here.",
    });
    return;
  }
  if (!signingCertPem) {
    findings.push({
      id: 'signature.unverified',
      severity: 'info',
      path,
      message: 'The catalog carries a depotkit signature; pass --signing-cert to verify it.',
    });
    return;
  }
  const verdict = verifyCatalogSignature(catalogBytes, sigText, signingCertPem);
  if (verdict.status === 'valid') {
    findings.push({ id: 'signature.valid', severity: 'info', path, message: 'The catalog signature is valid for the given key.' });
  } else if (verdict.status === 'other-signer') {
    findings.push({
      id: 'signature.other-signer',
      severity: 'error',
      path,
      message: 'The catalog was signed by another key than the one given.',
      evidence: { signer: verdict.signerSpkiSha256, given: verdict.expected },
    });
  } else if (verdict.status === 'invalid') {
    findings.push({
      id: 'signature.invalid',
      severity: 'error',
      path,
      message: `The catalog signature is not valid: ${verdict.reason}.`,
      fix: 'Make the depot again, or sign the catalog again with its key.',
    });
  }
}

/** Returns the binaries that are present with the right size. */
async function checkBinaries(root: string, binaries: CatalogBinary[], findings: Finding[]): Promise<CatalogBinary[]> {
  const sized: CatalogBinary[] = [];
  let elsewhere: Map<string, string[]> | undefined;
  for (const binary of binaries) {
    let size: number;
    try {
      const info = await stat(join(root, binary.path));
      if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
      size = info.size;
    } catch {
      elsewhere ??= await indexCompFiles(root);
      const found = (elsewhere.get(binary.fileName) ?? []).filter((p) => p !== binary.path);
      findings.push({
        id: found.length ? 'binary.misplaced' : 'binary.missing',
        severity: 'error',
        path: binary.path,
        message: found.length
          ? `${binary.fileName} is in ${found[0]} but the catalog puts it in ${binary.path}.`
          : `${binary.path} (${binary.component} ${binary.productVersion}) is missing.`,
        evidence: { size: binary.size, checksum: binary.checksum, ...(found.length ? { foundAt: found } : {}) },
        installer: `fails the ${binary.component} download with 404`,
        fix: found.length ? `mv ${join(root, found[0]!)} ${join(root, binary.path)}` : 'Download it and run `depotkit depot build --binaries <folder>` again.',
      });
      continue;
    }
    if (size !== binary.size) {
      findings.push({
        id: 'binary.size-mismatch',
        severity: 'error',
        path: binary.path,
        message: `${binary.path} is ${size} bytes; the catalog says ${binary.size}${size < binary.size ? ' (a partial download?)' : ''}.`,
        evidence: { actual: size, expected: binary.size },
        fix: 'Download the file again and place it with `depotkit depot build`.',
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
      continue;
    }
    await checkWorldReadable(root, binary.path, findings);
    sized.push(binary);
  }
  return sized;
}

/**
 * This user may read a file that the web server's user may not (a 0600
 * download copied as root): warn when others may not read it.
 */
async function checkWorldReadable(root: string, path: string, findings: Finding[]): Promise<void> {
  const mode = (await stat(join(root, path))).mode & 0o777;
  if (mode & 0o004) return;
  findings.push({
    id: 'file.not-world-readable',
    severity: 'warning',
    path,
    message: `${path} has mode ${mode.toString(8).padStart(4, '0')}: a web server running as another user cannot read it.`,
    installer: 'gets 403 for this file when the depot is served by nginx or Apache',
    fix: `chmod a+r ${join(root, path)}`,
  });
}

async function indexCompFiles(root: string): Promise<Map<string, string[]>> {
  const files = await fg('**/*', { cwd: join(root, DEPOT_PATHS.comp), onlyFiles: true, suppressErrors: true });
  const index = new Map<string, string[]>();
  for (const file of files) {
    const name = basename(file);
    index.set(name, [...(index.get(name) ?? []), `${DEPOT_PATHS.comp}/${file}`]);
  }
  return index;
}

async function reportUncatalogued(root: string, binaries: CatalogBinary[], findings: Finding[]): Promise<void> {
  const named = new Set(binaries.map((b) => b.path));
  const files = await fg('*/*', { cwd: join(root, DEPOT_PATHS.comp), onlyFiles: true, suppressErrors: true });
  for (const file of files) {
    const path = `${DEPOT_PATHS.comp}/${file}`;
    if (named.has(path)) continue;
    findings.push({ id: 'binary.not-in-catalog', severity: 'info', path, message: `${path} is not named in the catalog; the installer never fetches it.` });
  }
}
