import { X509Certificate } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { DEPOT_PATHS, HCL_MAX_AGE_DAYS, SERVE_PAGES, componentDir } from '../constants.js';
import { hclDate } from '../depot/hcl.js';
import { stateFileFor } from '../depot/place.js';
import { listUpgradeMetadata } from '../depot/upgrade-metadata.js';
import { errorMessage } from '../util/errors.js';
import { isObject } from '../util/json.js';

// Only node:crypto and plain reading here: the serving process that looks at the depot stays small (node-forge
// and a compiled JSON schema would add about 8 and 11 MB to it). `depotkit depot verify` and `check` judge
// the catalog's shape and the certificate in depth; this page shows what it can read.

/**
 * What `depotkit serve` shows at `/`: what the depot holds and whether it is complete, its certificate and
 * CA, and what to give the installer. Plain JSON (it crosses the IPC channel to the serving processes and is
 * the page's JSON variant); absolute times only, so that ages are computed when it is shown.
 */
export interface StatusData {
  /** Version of this shape; a field is only ever added. */
  format: 1;
  /** When the files were looked at. */
  checkedAt: string;
  /**
   * How presence was judged: `size` (each file's size against the catalog's, no hashing); `hashVerified`
   * files also match what `depotkit depot build` (or unpack, mirror) hashed and remembered, unchanged since.
   */
  check: 'size';
  summary: StatusSummary;
  catalog: StatusSource;
  manifest: StatusSource;
  /** `manifest`: releases and their bill of materials from the manifest; `catalog`: the catalog's product versions cut to four numbers. */
  grouping: 'manifest' | 'catalog';
  releases: StatusRelease[];
  /** Catalog entries no release of the manifest names (older or newer versions the catalog also offers). */
  otherComponents: StatusComponent[];
  hcl: StatusHcl;
  /** vCenter upgrade metadata files (PROD/COMP/VCENTER/vmw/<uuid>/...), which the catalog does not name: how a mirror finds them. */
  upgradeMetadata: string[];
  /** The served certificate (the leaf); null over plain HTTP. */
  certificate: StatusCertificate | null;
  ca: StatusCa;
  access: StatusAccess;
}

export interface StatusSummary {
  /** Every file the catalog names is present with its size (and the catalog could be read). */
  complete: boolean;
  /** Distinct files the catalog names. */
  files: number;
  present: number;
  missing: number;
  wrongSize: number;
  unreadable: number;
  /** Of the present files, those whose content was hashed when placed and is unchanged since. */
  hashVerified: number;
  /** Bytes the catalog names, and of those the bytes present. */
  bytes: number;
  presentBytes: number;
}

export interface StatusSource {
  state: 'ok' | 'missing' | 'invalid';
  /** Why it is missing or cannot be used. */
  message?: string;
}

export interface StatusRelease {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
  /** Every file of its components is present with its size (and it names some). */
  complete: boolean;
  components: StatusComponent[];
}

export interface StatusComponent {
  /** The component (the folder under PROD/COMP). */
  name: string;
  version: string;
  releaseDate?: string;
  /** False when the release names a component version the catalog does not have: no file to fetch. */
  inCatalog: boolean;
  files: StatusFile[];
}

export type FileState = 'present' | 'missing' | 'wrong-size' | 'unreadable';

export interface StatusFile {
  name: string;
  /** Web-root-relative path, as the installer fetches it below the depot URL. */
  path: string;
  /** Bytes, as the catalog says. */
  size: number;
  state: FileState;
  /** Bytes on disk, when the file is there with another size. */
  actualSize?: number;
  hashVerified: boolean;
}

export interface StatusHcl {
  state: 'ok' | 'missing' | 'invalid';
  /** When the vSAN HCL was last updated (its lastupdatedtime.json). */
  updated?: string;
  /** Older than this is reported as out of date by the installer. */
  maxAgeDays: number;
}

export interface StatusCertificate {
  subject: string;
  commonName?: string;
  issuer: string;
  dns: string[];
  ips: string[];
  notBefore: string;
  notAfter: string;
  /** SHA-256 of the DER, `AB:CD:...` as browsers and openssl show it. */
  sha256: string;
  isCa: boolean;
  selfSigned: boolean;
}

export interface StatusCa {
  /** The CA certificate to import into the installer's trust store; null when this server does not know it. */
  certificate: StatusCertificate | null;
  /** Its PEM text (public), served at /ca.pem. */
  pem?: string;
  /** Why it is not known. */
  unknownReason?: string;
}

export interface StatusAccess {
  /** The URL to give the installer: the folder that contains PROD/. */
  url: string;
  tls: boolean;
  auth: 'user' | 'htpasswd' | 'none';
  /** The Basic auth user, with a single user (an htpasswd file may hold several). */
  user?: string;
  /** Path prefixes left without credentials. */
  openPrefixes: string[];
  /** The path of the CA certificate's download on this server, when it serves one. */
  caPath?: string;
  commands: { check: string; installerDepot: string };
}

export interface StatusOptions {
  /** The served certificate, best followed by its chain (leaf first); absent over plain HTTP. */
  certPem?: string;
  /** The CA certificate, when it is not the last of the chain (or to name it explicitly). */
  caPem?: string;
  /** The URL the installer is given (scheme, host as the certificate names it, port, an optional prefix). */
  url: string;
  /** How the depot is protected: a single user's name, an htpasswd file, or nothing. */
  auth?: { user: string } | { htpasswd: true };
  openPrefixes?: string[];
  /** Where the CA certificate can be downloaded next to the page (serve: /ca.pem); none for a static copy that has no such file. */
  caPath?: string | null;
  now?: Date;
}

/** Caps on what is read to build the status: far above real files, low enough that a mistaken file is not read whole. */
const READ_LIMITS = { catalog: 64 * 1024 ** 2, manifest: 16 * 1024 ** 2, hclLastUpdated: 1024 ** 2, verifiedState: 64 * 1024 ** 2 } as const;

/** The file's text, or a StatusSource saying why there is none. */
async function readText(path: string, limit: number, shown: string): Promise<string | StatusSource> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return { state: 'missing', message: `${shown} is not a file.` };
    if (info.size > limit) return { state: 'invalid', message: `${shown} is larger than ${limit / 1024 ** 2} MiB.` };
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'missing', message: `${shown} is missing.` };
    return { state: 'invalid', message: `${shown} cannot be read (${code ?? errorMessage(err)}).` };
  }
}

const CERT_BLOCKS = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificate blocks of a text, in order. */
function certificateBlocks(pem: string): string[] {
  return pem.match(CERT_BLOCKS) ?? [];
}

/** Node prints names one attribute a line; one line reads better. */
const oneLine = (name: string) => name.split('\n').filter(Boolean).join(', ');

/** `DNS:a, IP Address:1.2.3.4` (Node quotes an entry holding a comma or quote as a JSON string) into its names. */
function subjectAltNames(text: string | undefined): { dns: string[]; ips: string[] } {
  const names = { dns: [] as string[], ips: [] as string[] };
  for (const match of (text ?? '').matchAll(/(?:^|, )(?:"((?:[^"\\]|\\.)*)"|([^,]+))/g)) {
    let entry = match[2] ?? match[1] ?? '';
    if (match[1] !== undefined) {
      try {
        entry = JSON.parse(`"${match[1]}"`) as string;
      } catch {
        entry = match[1];
      }
    }
    if (entry.startsWith('DNS:')) names.dns.push(entry.slice(4));
    else if (entry.startsWith('IP Address:')) names.ips.push(entry.slice(11));
  }
  return names;
}

function certificateOf(pem: string): { info: StatusCertificate; x509: X509Certificate } | undefined {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  const san = subjectAltNames(x509.subjectAltName);
  const commonName = x509.subject
    .split('\n')
    .filter((l) => l.startsWith('CN='))
    .pop()
    ?.slice(3);
  return {
    x509,
    info: {
      subject: oneLine(x509.subject),
      ...(commonName !== undefined ? { commonName } : {}),
      issuer: oneLine(x509.issuer),
      dns: san.dns,
      ips: san.ips,
      notBefore: new Date(x509.validFrom).toISOString(),
      notAfter: new Date(x509.validTo).toISOString(),
      sha256: x509.fingerprint256,
      isCa: x509.ca,
      selfSigned: x509.subject === x509.issuer && x509.verify(x509.publicKey),
    },
  };
}

/** The served leaf, and the CA certificate to trust: `caPem` when given, else the last of the chain when it is a CA. */
export function certificatesOf(certPem: string | undefined, caPem?: string): { certificate: StatusCertificate | null; ca: StatusCa } {
  const given = caPem !== undefined ? caOf(caPem) : undefined;
  if (certPem === undefined) {
    return { certificate: null, ca: given ?? { certificate: null, unknownReason: 'The depot is served over plain HTTP: there is no certificate to trust.' } };
  }
  const blocks = certificateBlocks(certPem);
  const certificate = blocks[0] !== undefined ? (certificateOf(blocks[0])?.info ?? null) : null;
  if (given) return { certificate, ca: given };
  if (blocks.length < 2) {
    return {
      certificate,
      ca: {
        certificate: null,
        unknownReason: 'The certificate file holds only the server certificate, not the CA that issued it: ask whoever issued it for the CA certificate.',
      },
    };
  }
  return {
    certificate,
    ca: caOf(blocks[blocks.length - 1]!) ?? {
      certificate: null,
      unknownReason: 'The last certificate of the chain is not a CA certificate: ask whoever issued the server certificate for the CA certificate.',
    },
  };
}

/** A CA certificate's status with its PEM, or undefined when it is not a readable CA certificate (then it is never served). */
function caOf(pem: string): StatusCa | undefined {
  const block = certificateBlocks(pem)[0];
  if (block === undefined) return undefined;
  const read = certificateOf(block);
  if (!read?.info.isCa) return undefined;
  return { certificate: read.info, pem: `${read.x509.toString().trim()}\n` };
}

/** Quotes a word for a POSIX shell when it needs it. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** File names the commands use for what the reader saves: the CA certificate and the depot user's password. */
const CA_FILE = 'depot-ca.pem';
const PASSWORD_FILE = 'depot.pass';

/** The `depotkit check` and `depotkit installer connect-depot` lines for this depot, with placeholders for what only the reader knows. */
export function statusCommands(url: string, tls: boolean, auth: StatusAccess['auth'], user: string | undefined, caKnown: boolean): StatusAccess['commands'] {
  const who = auth === 'none' ? undefined : user !== undefined ? shellWord(user) : '<user>';
  const ca = caKnown ? CA_FILE : '<CA certificate file>';
  const check = ['depotkit check', shellWord(url)];
  if (tls) check.push(`--ca ${ca}`);
  if (who) check.push(`--user ${who} --password-file ${PASSWORD_FILE}`);
  if (who && !tls) check.push('--allow-http-credentials');
  const push = ['depotkit installer connect-depot --installer https://<installer> --password-file <installer admin password file>'];
  if (tls) push.push(`--trust-ca ${ca}`);
  push.push(`--depot-url ${shellWord(url)}`);
  if (who) push.push(`--depot-user ${who} --depot-password-file ${PASSWORD_FILE}`);
  return { check: check.join(' '), installerDepot: push.join(' ') };
}

interface VerifiedEntry {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

/** What build, unpack and mirror remember of the files they hashed (absolute path -> size, mtime, inode, SHA-256); empty when absent. */
async function verifiedEntries(root: string): Promise<Record<string, VerifiedEntry>> {
  const text = await readText(stateFileFor(root), READ_LIMITS.verifiedState, 'verified.json');
  if (typeof text !== 'string') return {};
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, VerifiedEntry>) : {};
  } catch {
    return {};
  }
}

/** One version of one component in the catalog, with the files it names. */
interface CatalogEntry {
  component: string;
  productVersion: string;
  releaseDate?: string;
  binaries: { fileName: string; size: number; checksum: string }[];
}

// eslint-disable-next-line no-control-regex -- a name with control characters is refused, as the catalog's schema does
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * The catalog's entries, or why it cannot be used. The rules that keep a hostile catalog inside the depot are
 * the catalog schema's: a component is a folder name, a file name is a bare name (no slash, not `.` or `..`,
 * no control character), a size a whole number, a checksum SHA-256 hex. Anything else is read as it comes.
 */
function catalogEntries(text: string): CatalogEntry[] | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `The catalog is not valid JSON: ${errorMessage(err)}.`;
  }
  if (!isObject(value) || !isObject(value.patches)) return 'The catalog has no "patches" object.';
  const entries: CatalogEntry[] = [];
  for (const [component, versions] of Object.entries(value.patches)) {
    if (!/^[A-Za-z0-9_-]+$/.test(component)) return `The catalog names a component that is not a folder name: "${component}".`;
    if (!Array.isArray(versions)) return `The catalog's ${component} entry is not a list of versions.`;
    for (const v of versions as unknown[]) {
      if (!isObject(v) || typeof v.productVersion !== 'string' || v.productVersion === '')
        return `A version of ${component} in the catalog has no productVersion.`;
      const bundles = isObject(v.artifacts) ? v.artifacts.bundles : undefined;
      if (!Array.isArray(bundles)) return `${component} ${v.productVersion} in the catalog has no list of bundles.`;
      const binaries: CatalogEntry['binaries'] = [];
      for (const bundle of bundles as unknown[]) {
        if (!isObject(bundle) || !Array.isArray(bundle.binaries)) return `A bundle of ${component} ${v.productVersion} in the catalog has no list of binaries.`;
        for (const b of bundle.binaries as unknown[]) {
          const fileName = isObject(b) ? b.fileName : undefined;
          if (typeof fileName !== 'string' || fileName === '' || fileName === '.' || fileName === '..' || /[/\\]/.test(fileName) || CONTROL.test(fileName)) {
            return `A binary of ${component} ${v.productVersion} in the catalog has no usable file name (a bare name without slashes or control characters).`;
          }
          const { size, checksum } = b as Record<string, unknown>;
          if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return `${fileName} in the catalog has no size in whole bytes.`;
          if (typeof checksum !== 'string' || !/^[0-9a-fA-F]{64}$/.test(checksum)) return `${fileName} in the catalog has no SHA-256 checksum.`;
          binaries.push({ fileName, size, checksum: checksum.toLowerCase() });
        }
      }
      entries.push({ component, productVersion: v.productVersion, ...(typeof v.releaseDate === 'string' ? { releaseDate: v.releaseDate } : {}), binaries });
    }
  }
  return entries;
}

interface ManifestRelease {
  version: string;
  releaseDate?: string;
  minInstallerVersion?: string;
  bom: { name: string; version: string }[];
}

/** The manifest's releases, read tolerantly (only fragments of its shape are public): a version and a bill of materials each. */
function manifestReleases(text: string): ManifestRelease[] | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `The manifest is not valid JSON: ${errorMessage(err)}.`;
  }
  const releases = (value as { releases?: unknown } | null)?.releases;
  if (!Array.isArray(releases)) return 'The manifest has no list of releases.';
  const out: ManifestRelease[] = [];
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  for (const r of releases as Record<string, unknown>[]) {
    const version = str(r?.version);
    if (version === undefined || !Array.isArray(r.bom)) return 'A release of the manifest has no version or bill of materials.';
    const bom = (r.bom as Record<string, unknown>[]).flatMap((b) => {
      const name = str(b?.name);
      const v = str(b?.version);
      return name !== undefined && v !== undefined ? [{ name, version: v }] : [];
    });
    const releaseDate = str(r.releaseDate);
    const minInstallerVersion = str(r.minInstallerVersion);
    out.push({ version, ...(releaseDate !== undefined ? { releaseDate } : {}), ...(minInstallerVersion !== undefined ? { minInstallerVersion } : {}), bom });
  }
  return out;
}

/** 9.0.0.0.24755229 -> 9.0.0.0: a product version's first four numbers name its release. */
function releaseOfVersion(productVersion: string): string {
  return productVersion.split('.').slice(0, 4).join('.');
}

/**
 * Orders versions number by number (9.0.10 after 9.0.9), other parts by code point. Not localeCompare: its
 * collator maps about 3 MB of ICU data into the serving process.
 */
function byVersion(a: string, b: string): number {
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    // split() with a capture group puts the numbers at odd indexes.
    if (i % 2 === 1) return Number(x) - Number(y) || x.length - y.length;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Looks at the depot under `root` the cheap way: the catalog, the manifest and the HCL's time, and each file the
 * catalog names by its size (one stat each, nothing hashed), plus what build, unpack or mirror hashed and
 * remembered in `<root>/.depotkit/verified.json`. Problems with the depot are part of the result, never thrown.
 * `depotkit serve` calls it at start and on SIGHUP; `depotkit export` can render it as a static page.
 */
export async function statusData(root: string, options: StatusOptions): Promise<StatusData> {
  const dir = resolve(root);
  const realDir = await realpath(dir).catch(() => dir);
  const now = options.now ?? new Date();
  const { certificate, ca } = certificatesOf(options.certPem, options.caPem);
  const tls = options.certPem !== undefined;
  const auth: StatusAccess['auth'] = options.auth === undefined ? 'none' : 'user' in options.auth ? 'user' : 'htpasswd';
  const user = options.auth && 'user' in options.auth ? options.auth.user : undefined;
  const caPath = ca.certificate && options.caPath !== null ? (options.caPath ?? SERVE_PAGES.caCert) : undefined;
  const access: StatusAccess = {
    url: options.url,
    tls,
    auth,
    ...(user !== undefined ? { user } : {}),
    openPrefixes: options.openPrefixes ?? [],
    ...(caPath !== undefined ? { caPath } : {}),
    commands: statusCommands(options.url, tls, auth, user, ca.certificate !== null),
  };

  let catalogSource: StatusSource = { state: 'ok' };
  let entries: CatalogEntry[] = [];
  const catalogText = await readText(join(dir, DEPOT_PATHS.catalog), READ_LIMITS.catalog, DEPOT_PATHS.catalog);
  if (typeof catalogText === 'string') {
    const read = catalogEntries(catalogText);
    if (typeof read === 'string') catalogSource = { state: 'invalid', message: read };
    else entries = read;
  } else {
    catalogSource = catalogText;
  }

  let manifestSource: StatusSource = { state: 'ok' };
  let releases: ManifestRelease[] | undefined;
  const manifestText = await readText(join(dir, DEPOT_PATHS.manifest), READ_LIMITS.manifest, DEPOT_PATHS.manifest);
  if (typeof manifestText === 'string') {
    const parsed = manifestReleases(manifestText);
    if (typeof parsed === 'string') manifestSource = { state: 'invalid', message: parsed };
    else releases = parsed;
  } else {
    manifestSource = manifestText;
  }

  // Each distinct file is looked at once, however many versions name it.
  const verified = await verifiedEntries(dir);
  const seen = new Map<string, Promise<Pick<StatusFile, 'state' | 'actualSize' | 'hashVerified'>>>();
  const look = (path: string, size: number, checksum: string) => {
    const key = `${path}\0${size}\0${checksum}`;
    let found = seen.get(key);
    if (!found) {
      found = lookAt(dir, realDir, path, size, checksum, verified);
      seen.set(key, found);
    }
    return found;
  };
  const componentOf = async (e: CatalogEntry): Promise<StatusComponent> => {
    const files: StatusFile[] = [];
    for (const b of e.binaries) {
      const path = `${componentDir(e.component)}/${b.fileName}`;
      if (files.some((f) => f.path === path)) continue;
      files.push({ name: b.fileName, path, size: b.size, ...(await look(path, b.size, b.checksum)) });
    }
    return { name: e.component, version: e.productVersion, ...(e.releaseDate !== undefined ? { releaseDate: e.releaseDate } : {}), inCatalog: true, files };
  };

  const statusReleases: StatusRelease[] = [];
  const otherComponents: StatusComponent[] = [];
  const grouping = releases ? 'manifest' : 'catalog';
  if (releases) {
    const named = new Set<string>();
    for (const r of releases) {
      const components: StatusComponent[] = [];
      for (const b of r.bom) {
        named.add(`${b.name}\0${b.version}`);
        const match = entries.filter((e) => e.component === b.name && e.productVersion === b.version);
        if (match.length === 0) components.push({ name: b.name, version: b.version, inCatalog: false, files: [] });
        for (const m of match) components.push(await componentOf(m));
      }
      statusReleases.push({
        version: r.version,
        ...(r.releaseDate !== undefined ? { releaseDate: r.releaseDate } : {}),
        ...(r.minInstallerVersion !== undefined ? { minInstallerVersion: r.minInstallerVersion } : {}),
        complete: false,
        components,
      });
    }
    for (const e of entries) if (!named.has(`${e.component}\0${e.productVersion}`)) otherComponents.push(await componentOf(e));
  } else {
    const groups = new Map<string, StatusComponent[]>();
    for (const e of entries) {
      const version = releaseOfVersion(e.productVersion);
      groups.set(version, [...(groups.get(version) ?? []), await componentOf(e)]);
    }
    for (const [version, components] of groups) statusReleases.push({ version, complete: false, components });
  }
  for (const r of statusReleases) {
    r.components.sort((a, b) => byName(a.name, b.name) || byVersion(a.version, b.version));
    const files = r.components.flatMap((c) => c.files);
    r.complete = files.length > 0 && files.every((f) => f.state === 'present');
  }
  statusReleases.sort((a, b) => byVersion(a.version, b.version));
  otherComponents.sort((a, b) => byName(a.name, b.name) || byVersion(a.version, b.version));

  const distinct = new Map<string, { size: number; look: Awaited<ReturnType<typeof look>> }>();
  for (const e of entries) {
    for (const b of e.binaries) {
      const path = `${componentDir(e.component)}/${b.fileName}`;
      if (!distinct.has(path)) distinct.set(path, { size: b.size, look: await look(path, b.size, b.checksum) });
    }
  }
  const all = [...distinct.values()];
  const count = (state: FileState) => all.filter((f) => f.look.state === state).length;
  const summary: StatusSummary = {
    complete: catalogSource.state === 'ok' && all.length > 0 && all.every((f) => f.look.state === 'present'),
    files: all.length,
    present: count('present'),
    missing: count('missing'),
    wrongSize: count('wrong-size'),
    unreadable: count('unreadable'),
    hashVerified: all.filter((f) => f.look.hashVerified).length,
    bytes: all.reduce((sum, f) => sum + f.size, 0),
    presentBytes: all.filter((f) => f.look.state === 'present').reduce((sum, f) => sum + f.size, 0),
  };

  return {
    format: 1,
    checkedAt: now.toISOString(),
    check: 'size',
    summary,
    catalog: catalogSource,
    manifest: manifestSource,
    grouping,
    releases: statusReleases,
    otherComponents,
    hcl: await hclStatus(dir),
    upgradeMetadata: await listUpgradeMetadata(dir),
    certificate,
    ca,
    access,
  };
}

/** One catalogued file: there with the catalog's size and readable, and hashed before without change since. */
async function lookAt(
  dir: string,
  realDir: string,
  path: string,
  size: number,
  checksum: string,
  verified: Record<string, VerifiedEntry>,
): Promise<Pick<StatusFile, 'state' | 'actualSize' | 'hashVerified'>> {
  const full = join(dir, path);
  let info;
  try {
    info = await stat(full);
  } catch {
    return { state: 'missing', hashVerified: false };
  }
  if (!info.isFile()) return { state: 'missing', hashVerified: false };
  if (info.size !== size) return { state: 'wrong-size', actualSize: info.size, hashVerified: false };
  try {
    await access(full, fsConstants.R_OK);
  } catch {
    return { state: 'unreadable', hashVerified: false };
  }
  const entry = verified[full] ?? verified[join(realDir, path)];
  const hashVerified = entry !== undefined && entry.sha256 === checksum && entry.size === info.size && entry.mtimeMs === info.mtimeMs && entry.ino === info.ino;
  return { state: 'present', hashVerified };
}

/** The vSAN HCL's time from lastupdatedtime.json (the small file; all.json is tens of MB and carries the same). */
async function hclStatus(dir: string): Promise<StatusHcl> {
  const text = await readText(join(dir, DEPOT_PATHS.hclLastUpdated), READ_LIMITS.hclLastUpdated, DEPOT_PATHS.hclLastUpdated);
  if (typeof text !== 'string') return { state: text.state, maxAgeDays: HCL_MAX_AGE_DAYS };
  try {
    const value = JSON.parse(text) as unknown;
    if (!isObject(value) || typeof value.timestamp !== 'number') return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
    const date = hclDate({ timestamp: value.timestamp, jsonUpdatedTime: '' });
    if (Number.isNaN(date.getTime())) return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
    return { state: 'ok', updated: date.toISOString(), maxAgeDays: HCL_MAX_AGE_DAYS };
  } catch {
    return { state: 'invalid', maxAgeDays: HCL_MAX_AGE_DAYS };
  }
}

/** The URL to give the installer for a server listening on `host`:`port`: the certificate's name (the installer checks it strictly), else the address. */
export function installerUrl(certPem: string | undefined, host: string, port: number, fallbackHost: string): string {
  let name: string | undefined;
  if (certPem !== undefined) {
    const block = certificateBlocks(certPem)[0];
    const info = block !== undefined ? certificateOf(block)?.info : undefined;
    const dns = (info?.dns ?? []).filter((d) => !d.startsWith('*.'));
    name = dns.find((d) => d !== 'localhost') ?? dns[0] ?? info?.ips[0];
  }
  name ??= host === '0.0.0.0' || host === '::' ? fallbackHost : host;
  const shown = name.includes(':') ? `[${name}]` : name;
  const scheme = certPem !== undefined ? 'https' : 'http';
  const defaultPort = scheme === 'https' ? 443 : 80;
  return `${scheme}://${shown}${port === defaultPort ? '' : `:${port}`}`;
}
