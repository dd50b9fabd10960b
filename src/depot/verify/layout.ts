import { constants as fsConstants } from 'node:fs';
import { access, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, KNOWN_COMPONENTS, TEMP_PREFIX } from '../../constants.js';
import { usageError } from '../../util/errors.js';
import type { Finding } from '../../util/findings.js';
import { exists, isDirectory } from '../../util/fs.js';
import { listFiles } from '../../util/walk.js';
import { closestName } from '../../util/text.js';
import { suggestComponent } from '../names.js';

const REQUIRED_FILES: { path: string; what: string }[] = [
  { path: DEPOT_PATHS.catalog, what: 'product version catalog' },
  { path: DEPOT_PATHS.catalogSig, what: 'catalog signature' },
  { path: DEPOT_PATHS.manifest, what: 'manifest' },
  { path: DEPOT_PATHS.hclAll, what: 'vSAN HCL' },
  { path: DEPOT_PATHS.hclLastUpdated, what: 'vSAN HCL last-updated time' },
  { path: DEPOT_PATHS.compatibility, what: 'Compatibility data' },
];

/**
 * A depot folder that is not there: one fix, the likeliest. A misspelt name
 * beside a depot is that depot; otherwise the folder is simply missing.
 */
export async function notADepotFolder(root: string): Promise<Error> {
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
  return `Point at the folder that contains ${DEPOT_ROOT_DIR}/; to make one, use \`buildDepot\` (or \`makeDemoDepot\` for a lab).`;
}

/** The one finding of a folder without PROD/ (the PROD folder itself, or another), or undefined when it has one. */
export async function rootFinding(root: string): Promise<Finding | undefined> {
  if (await isDirectory(join(root, DEPOT_ROOT_DIR))) return undefined;
  if (basename(root) === DEPOT_ROOT_DIR) {
    return {
      id: 'layout.root.is-prod',
      severity: 'error',
      path: root,
      message: `${root} is the ${DEPOT_ROOT_DIR} folder itself; the depot root is the folder that contains it.`,
      fix: `Run the command on ${resolve(root, '..')}.`,
    };
  }
  return { id: 'layout.root.missing', severity: 'error', path: root, message: `${root} has no ${DEPOT_ROOT_DIR}/ folder.`, fix: await missingRootFix(root) };
}

/** Each metadata file the installer reads: there, readable by this user and by others. */
export async function checkRequiredFiles(root: string, findings: Finding[]): Promise<void> {
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
          : `Lay out the vendor's whole metadata archive with \`buildDepot\` \`metadata\` <zip> \`binaries\` <folder> \`out\` ${root} (download it again if it lacks this file).`,
      });
    }
  }
}

/** The component folders: misspelt ones with the name meant, unknown ones, and the required ones missing. */
export async function checkComponentFolders(root: string, required: readonly string[], findings: Finding[]): Promise<void> {
  let entries: string[] = [];
  try {
    entries = (await readdir(join(root, DEPOT_PATHS.comp), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    findings.push({
      id: 'layout.comp.missing',
      severity: 'error',
      path: DEPOT_PATHS.comp,
      message: `${DEPOT_PATHS.comp}/ is missing.`,
      fix: 'Build the tree with `buildDepot`.',
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
      fix: 'Add its binaries with `buildDepot`.',
    });
  }
}

/** Partial files an interrupted run left behind. */
export async function checkTempFiles(root: string, findings: Finding[]): Promise<void> {
  const leftovers = await listFiles(join(root, DEPOT_ROOT_DIR), { dot: true, name: (n) => n.startsWith(TEMP_PREFIX) });
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

/**
 * This user may read a file that the web server's user may not (a 0600
 * download copied as root): warn when others may not read it.
 */
export async function checkWorldReadable(root: string, path: string, findings: Finding[]): Promise<void> {
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
