import { realpathSync } from 'node:fs';
import { chown, lstat, readFile, readdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isSea } from 'node:sea';
import { DEPOT_PATHS, DEPOT_ROOT_DIR, EXPORT_DEBIAN, EXPORT_DEFAULT_PORT, EXPORT_TARGETS, SERVE_AUTH_REALM, type ExportTarget } from '../constants.js';
import { CA_KEY_FILE } from '../pki/files.js';
import { inspectCertificate } from '../pki/inspect.js';
import { normaliseOpenPrefix } from '../server/paths.js';
import { STATUS_PAGE_CSP, renderStatusPage } from '../server/status-page.js';
import { statusData } from '../server/status-data.js';
import { loadTlsMaterial, secureOptions } from '../server/tls.js';
import { SERVE_DEFAULT_GRACE_SECONDS } from '../server/tuning.js';
import { argumentsError, usageError } from '../util/errors.js';
import { exists, isDirectory, writeFileAtomic } from '../util/fs.js';
import { basicAuthDirective, installedCaddyVersion } from './caddy.js';
import { makeExportFolders } from './folders.js';
import { loadTemplate, renderTemplate, type TemplateName, type TemplateScope } from './template.js';
import { planUsers, type AuthSource, type UsersPlan } from './users.js';
import { configPath, exportName, groupId, hostValue, shellWord, tlsSuites } from './values.js';

export { EXPORT_TARGETS, type ExportTarget } from '../constants.js';
export { renderTemplate, loadTemplate, TEMPLATE_NAMES, type TemplateScope, type TemplateValue } from './template.js';
export { basicAuthDirective, parseCaddyVersion, caddyVersionOption, installedCaddyVersion } from './caddy.js';

export interface ExportOptions {
  target: ExportTarget;
  /** The web root: the folder that contains PROD/. */
  root: string;
  /** Where the files are written; the configurations name the files written there by their absolute paths. */
  out: string;
  /** Base name of the files, the systemd unit and its user (default depotkit). */
  name?: string;
  /** Address to listen on; every address when absent. */
  host?: string;
  /** Default 443. */
  port?: number;
  /** The depot's FQDN, as the installer is given it; default: the certificate's first DNS name. */
  serverName?: string;
  /** The certificate (best the chain: leaf then CA) and its key, read where they are. */
  cert?: string;
  key?: string;
  /** systemd only: let depotkit serve issue its certificate from this CA folder, with these names. */
  ca?: string;
  dns?: string[];
  ip?: string[];
  auth?: AuthSource;
  openPrefixes?: string[];
  openHcl?: boolean;
  /** Group that must read the users file (the server's workers' or the service's); default per server. */
  group?: string;
  /**
   * nginx, Apache, Caddy: write the status page `depotkit serve` shows at / as a static copy
   * (`<out>/status/index.html`, and the CA certificate it links to as `/ca.pem`), served at / behind
   * the same auth. A copy: export again to refresh it.
   */
  statusPage?: boolean;
  /** Caddy's version (e.g. 2.6.2); asked of the installed `caddy` when absent. */
  caddyVersion?: string;
  /** Access log file ('-' for systemd: the journal). */
  accessLog?: string;
  /** systemd: serve's --log-format, --workers and --grace. */
  logFormat?: 'combined' | 'json';
  workers?: number;
  grace?: number;
  /** systemd: the command that runs depotkit; default the program running now (this executable, or node and the CLI script). */
  exec?: string[];
  /** systemd: the dedicated user the service runs as (default: the name); the group is its own unless --group. */
  serviceUser?: string;
  force?: boolean;
}

export type ExportedRole = 'site' | 'caddyfile' | 'users' | 'unit' | 'logrotate' | 'sysusers' | 'status-page' | 'ca';

export interface ExportedFile {
  path: string;
  role: ExportedRole;
  mode: number;
  /** The group given the file (the server's), when this process could set it. */
  group?: string;
}

export interface ExportReport {
  target: ExportTarget;
  root: string;
  /** What the installer is given. */
  url: string;
  files: ExportedFile[];
  /** Files the configuration reads where they are. */
  reads: { cert?: string; key?: string; ca?: string; htpasswd?: string };
  open: string[];
  /** Caddy: the version written for and the Basic auth directive used. */
  caddy?: { version?: string; directive: string };
  /** What to do next, in order: copy, permissions, test, reload, check. */
  nextSteps: string[];
  /** The depotkit check command that must accept the depot through this server. */
  check: string;
  warnings: string[];
}

interface PlannedFile {
  path: string;
  role: ExportedRole;
  text: string;
  /** 0640 for the users file: its group is the server's. */
  mode: number;
}

interface Common {
  name: string;
  root: string;
  out: string;
  port: number;
  host?: string;
  serverName: string;
  urlPort: string;
  cert?: string;
  key?: string;
  users?: UsersPlan;
  open: string[];
  group: string;
  serviceUser: string;
  accessLog?: string;
  warnings: string[];
  /** Folders made for the files (0750) whose group could not be set to the server's here. */
  ungroupedFolders?: string[];
}

const SECRET_MODE = 0o640;
const PUBLIC_MODE = 0o644;

export async function exportConfig(options: ExportOptions): Promise<ExportReport> {
  if (!EXPORT_TARGETS.includes(options.target))
    throw usageError(`"${options.target}" is not a server depotkit exports for; choose one of ${EXPORT_TARGETS.join(', ')}.`);
  const common = await prepare(options);
  const planned = await plan(options, common);
  const files: PlannedFile[] = planned.files;
  if (!options.force) {
    for (const f of files) if (await exists(f.path)) throw usageError(`${f.path} already exists.`, 'Use --force to replace it.');
  }
  const gid = await groupId(common.group);
  const canChown = gid !== undefined && (process.getuid?.() === 0 || (process.getgroups?.() ?? []).includes(gid));
  const { ungrouped } = await makeExportFolders(
    common.out,
    files.map((f) => f.path),
    canChown ? gid : undefined,
  );
  common.ungroupedFolders = ungrouped;
  const written: ExportedFile[] = [];
  for (const f of files) {
    await writeFileAtomic(f.path, f.text, { mode: f.mode, force: options.force });
    let group: string | undefined;
    if (f.mode === SECRET_MODE && canChown) {
      await chown(f.path, -1, gid);
      group = common.group;
    }
    written.push({ path: f.path, role: f.role, mode: f.mode, ...(group ? { group } : {}) });
  }
  const unowned = written.filter((f) => f.mode === SECRET_MODE && !f.group).map((f) => f.path);
  const nextSteps = planned.nextSteps(unowned);
  return {
    target: options.target,
    root: common.root,
    url: `https://${common.serverName}${common.urlPort}`,
    files: written,
    reads: planned.reads,
    open: common.open,
    ...(planned.caddy ? { caddy: planned.caddy } : {}),
    nextSteps,
    check: checkCommand(common),
    warnings: common.warnings,
  };
}

async function prepare(options: ExportOptions): Promise<Common> {
  const warnings: string[] = [];
  const name = exportName(options.name ?? 'depotkit');
  const root = configPath(resolve(options.root), 'The depot folder');
  if (!(await isDirectory(root))) throw usageError(`${root} is not a folder.`);
  if (!(await isDirectory(join(root, DEPOT_ROOT_DIR)))) {
    if (basename(root) === DEPOT_ROOT_DIR) {
      throw usageError(
        `${root} is the ${DEPOT_ROOT_DIR} folder itself; the installer fetches /${DEPOT_ROOT_DIR}/..., so export the folder that contains it.`,
        `depotkit export ${options.target} ${dirname(root)} ...`,
      );
    }
    warnings.push(`${root} has no ${DEPOT_ROOT_DIR}/ folder; the installer will find nothing there.`);
  }
  const out = configPath(resolve(options.out), '--out');
  const port = options.port ?? EXPORT_DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw usageError('--port must be between 1 and 65535.');
  const host = options.host === undefined || options.host === '0.0.0.0' ? undefined : hostValue(options.host, '--host');

  let cert: string | undefined;
  let key: string | undefined;
  let certNames: string[] = [];
  if (options.cert || options.key) {
    if (!options.cert || !options.key) throw argumentsError('--cert and --key go together.');
    if (options.ca) throw usageError('Give either --cert and --key, or --ca, not both.');
    cert = configPath(resolve(options.cert), '--cert');
    key = configPath(resolve(options.key), '--key');
    // Read now, so that a wrong pair fails here rather than at the server's start.
    const material = await loadTlsMaterial({ certFile: cert, keyFile: key });
    secureOptions(material);
    const info = inspectCertificate(material.certPem, cert);
    certNames = [...info.san.dns, ...(info.commonName ? [info.commonName] : [])];
    if (info.notAfter.getTime() < Date.now()) warnings.push(`The certificate ${cert} expired on ${info.notAfter.toISOString()}.`);
  } else if (options.target !== 'systemd' || !options.ca) {
    const hint =
      options.target === 'systemd'
        ? 'Give --cert and --key, or --ca <dir> to let depotkit serve issue one.'
        : 'Give --cert and --key (make them with depotkit cert issue).';
    throw usageError(options.ca ? `--ca is for systemd only: ${options.target} cannot issue its own certificate.` : 'No certificate given.', hint);
  }
  if (options.target !== 'systemd' && ((options.dns?.length ?? 0) > 0 || (options.ip?.length ?? 0) > 0)) {
    throw usageError('--dns and --ip name the certificate depotkit serve issues with --ca (systemd only).');
  }
  const serverName = hostValue(options.serverName ?? certNames[0] ?? options.dns?.[0] ?? 'localhost', '--server-name');
  if (options.serverName === undefined && certNames.length === 0 && !options.dns?.length) {
    warnings.push('No --server-name and no DNS name in a certificate: "localhost" is written; give the FQDN the installer will use.');
  }

  const prefixes = [...(options.openHcl ? [DEPOT_PATHS.hclDir] : []), ...(options.openPrefixes ?? []).map((p) => normaliseOpenPrefix(p, '--open'))];
  const open = [...new Set(prefixes)].map((p) => {
    configPath(`/${p}`, '--open');
    return p;
  });
  if (open.length > 0 && !options.auth) {
    warnings.push('--open and --open-hcl do nothing without auth: the whole depot is open.');
    open.length = 0;
  }
  for (const prefix of open) {
    if (!(await exists(join(root, prefix)))) warnings.push(`${prefix} does not exist under ${root} (yet); it is open once it does.`);
    const links = await symlinksUnder(join(root, prefix));
    if (links.length > 0) {
      warnings.push(
        options.target === 'caddy'
          ? `${links.slice(0, 3).join(', ')}${links.length > 3 ? ` and ${links.length - 3} more` : ''}: symlinks under the open prefix ${prefix}, which Caddy follows without asking for credentials wherever they lead; replace them with copies.`
          : `${links.slice(0, 3).join(', ')}${links.length > 3 ? ` and ${links.length - 3} more` : ''}: symlinks under the open prefix ${prefix}, which the server will not follow (so that none leads into the protected tree); replace them with copies.`,
      );
    }
  }
  if (!options.auth) warnings.push('No --user/--password-file or --htpasswd: anyone who can reach the port can download the depot.');

  const usersFile = join(out, options.target === 'caddy' ? `${name}.users` : `${name}.htpasswd`);
  const users = options.auth ? await planUsers(options.target, options.auth, usersFile) : undefined;
  if (users) {
    configPath(users.file, '--htpasswd');
    warnings.push(...users.warnings);
  }
  const serviceUser = options.serviceUser ?? name;
  if (!ACCOUNT_NAME.test(serviceUser)) throw usageError(`--service-user "${serviceUser}" is not a user name.`);
  const group = options.group ?? defaultGroup(options.target, serviceUser);
  if (!ACCOUNT_NAME.test(group)) throw usageError(`--group "${group}" is not a group name.`);
  const accessLog = options.accessLog === undefined || options.accessLog === '-' ? undefined : configPath(resolve(options.accessLog), '--access-log');
  return {
    name,
    root,
    out,
    port,
    host,
    serverName,
    urlPort: port === EXPORT_DEFAULT_PORT ? '' : `:${port}`,
    cert,
    key,
    users,
    open,
    group,
    serviceUser,
    accessLog,
    warnings,
  };
}

/** Symlinks below `dir` (itself included), at most a few thousand entries looked at. */
async function symlinksUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const queue = [dir];
  let seen = 0;
  try {
    if ((await lstat(dir)).isSymbolicLink()) return [dir];
  } catch {
    return [];
  }
  while (queue.length > 0 && seen < 5000) {
    const current = queue.shift()!;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      seen++;
      if (e.isSymbolicLink()) found.push(join(current, e.name));
      else if (e.isDirectory()) queue.push(join(current, e.name));
    }
  }
  return found;
}

function defaultGroup(target: ExportTarget, serviceUser: string): string {
  if (target === 'systemd') return serviceUser;
  return EXPORT_DEBIAN[target].group;
}

const ACCOUNT_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

function checkCommand(c: Common): string {
  const words = ['depotkit', 'check', `https://${c.serverName}${c.urlPort}`, '--ca', '<the CA certificate the installer trusts>'];
  if (c.users) words.push('--user', c.users.user, '--password-file', `<${c.users.user}'s password file>`);
  for (const p of c.open) if (p !== DEPOT_PATHS.hclDir) words.push('--open-path', `${p}/`);
  return words.map((w) => (w.startsWith('<') ? w : shellWord(w))).join(' ');
}

async function render(name: TemplateName, scope: TemplateScope): Promise<string> {
  return renderTemplate(await loadTemplate(name), scope, `templates/${name}`);
}

interface Plan {
  files: PlannedFile[];
  reads: ExportReport['reads'];
  caddy?: ExportReport['caddy'];
  /** The steps, given the secret files whose group could not be set here. */
  nextSteps(unowned: string[]): string[];
}

function usersFile(c: Common): PlannedFile[] {
  return c.users?.text !== undefined ? [{ path: c.users.file, role: 'users', text: c.users.text, mode: SECRET_MODE }] : [];
}

/** The files that need the server's group, and the htpasswd file read in place too. */
function groupStep(c: Common, unowned: string[], extra: string[] = []): string[] {
  const files = [...unowned, ...extra];
  if (c.users?.text === undefined && c.users) files.push(c.users.file);
  const folders = c.ungroupedFolders ?? [];
  const steps =
    folders.length === 0 ? [] : [`sudo chgrp ${c.group} ${folders.map(shellWord).join(' ')}   # made 0750: the ${c.group} group must reach the files in it`];
  if (files.length === 0) return steps;
  const list = [...new Set(files)].map(shellWord).join(' ');
  return [...steps, `sudo chgrp ${c.group} ${list} && sudo chmod 0640 ${list}   # the ${c.group} group must read these`];
}

function baseScope(c: Common): TemplateScope {
  const suites = tlsSuites();
  return {
    name: c.name,
    root: c.root,
    port: c.port,
    serverName: c.serverName,
    urlPort: c.urlPort,
    cert: c.cert ?? '',
    key: c.key ?? '',
    realm: SERVE_AUTH_REALM,
    auth: Boolean(c.users),
    htpasswd: c.users?.file ?? '',
    open: c.open.map((prefix) => ({ prefix })),
    hasOpen: c.open.length > 0,
    accessLog: c.accessLog ?? '',
    tls12Ciphers: suites.tls12.join(':'),
    tls13Ciphers: suites.tls13.join(':'),
  };
}

/**
 * The static status page and the CA certificate it links to, and the template values that serve them;
 * nothing when not asked for (or for systemd, where depotkit serve shows the live page itself).
 */
async function statusFiles(options: ExportOptions, c: Common): Promise<{ files: PlannedFile[]; scope: TemplateScope }> {
  const none = { statusDir: '', statusCa: false, statusCsp: STATUS_PAGE_CSP, hasProtectedMatcher: c.open.length > 0 };
  if (!options.statusPage || options.target === 'systemd' || !c.cert) return { files: [], scope: none };
  const dir = join(c.out, 'status');
  const certPem = await readFile(c.cert, 'utf8');
  const auth = !options.auth ? undefined : 'user' in options.auth ? { user: options.auth.user } : { htpasswd: true as const };
  // The page links the CA to /ca.pem only when there is a CA certificate to write there.
  const data = await statusData(c.root, {
    certPem,
    url: `https://${c.serverName}${c.urlPort}`,
    ...(auth ? { auth } : {}),
    openPrefixes: c.open,
    caPath: '/ca.pem',
  });
  const caPem = data.ca.pem;
  const files: PlannedFile[] = [{ path: join(dir, 'index.html'), role: 'status-page', text: renderStatusPage(data, { snapshot: true }), mode: PUBLIC_MODE }];
  if (caPem) files.push({ path: join(dir, 'ca.pem'), role: 'ca', text: caPem, mode: PUBLIC_MODE });
  return { files, scope: { statusDir: dir, statusCa: Boolean(caPem), statusCsp: STATUS_PAGE_CSP, hasProtectedMatcher: c.open.length > 0 || Boolean(caPem) } };
}

async function plan(options: ExportOptions, c: Common): Promise<Plan> {
  const reads = { cert: c.cert, key: c.key, ...(c.users && c.users.text === undefined ? { htpasswd: c.users.file } : {}) };
  const check = checkCommand(c);
  const status = await statusFiles(options, c);
  switch (options.target) {
    case 'nginx': {
      const site = join(c.out, `${c.name}.conf`);
      const text = await render('nginx.conf', {
        ...baseScope(c),
        ...status.scope,
        listen: c.host ? `${c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}` : String(c.port),
      });
      const debian = EXPORT_DEBIAN.nginx;
      return {
        files: [{ path: site, role: 'site', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
        reads,
        nextSteps: (unowned) => [
          `sudo ln -s ${shellWord(site)} ${debian.siteDir}/${c.name}.conf   # or copy it there; the files it names stay where they are`,
          ...groupStep(c, unowned),
          `sudo ${debian.test} && sudo ${debian.reload}`,
          check,
        ],
      };
    }
    case 'apache': {
      const site = join(c.out, `${c.name}.conf`);
      const debian = EXPORT_DEBIAN.apache;
      const text = await render('apache.conf', {
        ...baseScope(c),
        ...status.scope,
        listen: `${c.host ? (c.host.includes(':') ? `[${c.host}]` : c.host) : '*'}:${c.port}`,
        modules: debian.modules.join(' '),
      });
      return {
        files: [{ path: site, role: 'site', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
        reads,
        nextSteps: (unowned) => [
          `sudo ln -s ${shellWord(site)} ${debian.siteDir}/${c.name}.conf   # or copy it there; the files it names stay where they are`,
          `sudo a2enmod ${[...debian.modules, ...(status.files.length > 0 ? ['headers'] : [])].join(' ')} && sudo a2ensite ${c.name}`,
          ...(c.port === EXPORT_DEFAULT_PORT
            ? []
            : [
                `grep -qx 'Listen ${c.port}' ${debian.portsFile} || echo 'Listen ${c.port}' | sudo tee -a ${debian.portsFile}   # Apache listens on 443 only once ssl is enabled`,
              ]),
          ...groupStep(c, unowned),
          `sudo ${debian.test} && sudo ${debian.reload}`,
          check,
        ],
      };
    }
    case 'caddy': {
      const given = options.caddyVersion;
      const detected = given ?? (await installedCaddyVersion());
      const directive = detected ? basicAuthDirective(detected) : 'basicauth';
      if (!detected)
        c.warnings.push(
          'No caddy here to ask its version and no --caddy-version: written with basicauth, which Caddy 2.6 (Debian 12) needs and later versions accept with a deprecation warning.',
        );
      const caddyfile = join(c.out, 'Caddyfile');
      const text = await render('Caddyfile', {
        ...baseScope(c),
        ...status.scope,
        host: c.host ?? '',
        users: c.users?.file ?? '',
        basicAuthDirective: directive,
        caddyVersion: detected ?? '2',
        tls12Ciphers: tlsSuites().tls12Iana.join(' '),
      });
      const debian = EXPORT_DEBIAN.caddy;
      return {
        files: [{ path: caddyfile, role: 'caddyfile', text, mode: PUBLIC_MODE }, ...usersFile(c), ...status.files],
        reads: { cert: c.cert, key: c.key },
        caddy: { ...(detected ? { version: detected } : {}), directive },
        nextSteps: (unowned) => [
          `sudo cp ${shellWord(caddyfile)} ${debian.caddyfile}   # a whole Caddyfile: it replaces the default one; the files it names stay where they are`,
          // Caddy runs as its own user: it reads the key and the users when it loads the configuration.
          ...groupStep(c, unowned, c.key ? [c.key] : []),
          `caddy validate --config ${debian.caddyfile} --adapter caddyfile && sudo ${debian.reload}`,
          check,
        ],
      };
    }
    case 'systemd':
      return planSystemd(options, c, check);
  }
}

/** The command that runs depotkit now: this single executable, or node with the CLI script. */
export function currentDepotkitCommand(): string[] {
  if (isSea()) return [process.execPath];
  const script = process.argv[1];
  return script ? [process.execPath, realpathSync(script)] : [EXPORT_DEBIAN.systemd.binary];
}

async function planSystemd(options: ExportOptions, c: Common, check: string): Promise<Plan> {
  const debian = EXPORT_DEBIAN.systemd;
  const exec = (options.exec ?? currentDepotkitCommand()).map((w, i) => (i === 0 ? configPath(w, '--exec') : w));
  const grace = options.grace ?? SERVE_DEFAULT_GRACE_SECONDS;
  const journal = options.accessLog === '-';
  const logFile = journal ? undefined : (c.accessLog ?? `${debian.logDir}/${c.name}/access.log`);
  const logsDirectory = logFile === `${debian.logDir}/${c.name}/access.log` ? c.name : undefined;
  const serve: string[] = ['serve', c.root, ...(c.host ? ['--host', c.host] : []), '--port', String(c.port)];
  if (c.cert && c.key) serve.push('--cert', c.cert, '--key', c.key);
  if (options.ca) {
    const ca = configPath(resolve(options.ca), '--ca');
    serve.push('--ca', ca);
    for (const d of options.dns ?? []) serve.push('--dns', hostValue(d, '--dns'));
    for (const ip of options.ip ?? []) serve.push('--ip', hostValue(ip, '--ip'));
    c.warnings.push(
      `With --ca the service user must read the CA key in ${ca}; a certificate issued beforehand (--cert, --key) keeps the CA key off the server.`,
    );
  }
  if (c.users) serve.push('--htpasswd', c.users.file);
  for (const p of c.open) serve.push('--open', p);
  if (options.workers !== undefined) serve.push('--workers', String(options.workers));
  serve.push('--grace', String(grace));
  if (journal) serve.push('--access-log', '-');
  else if (logFile) serve.push('--access-log', logFile);
  if (options.logFormat && options.logFormat !== 'combined') serve.push('--log-format', options.logFormat);
  const words = [...exec, ...serve];
  for (const w of words) if (/["\\%$\s]/.test(w)) throw usageError(`"${w}" cannot be written into a systemd unit's command line.`);
  const execStart = words.map((w, i) => (i < exec.length || w.startsWith('/') ? `"${w}"` : w)).join(' ');

  const scope: TemplateScope = {
    ...baseScope(c),
    user: c.serviceUser,
    group: c.group,
    execStart,
    grace,
    // Past the grace period, the server's own hard stop (5 s later) and a margin: systemd's SIGKILL stays the last resort.
    timeoutStopSec: grace + 15,
    logsDirectory: logsDirectory ?? '',
    logFile: logFile ?? '',
  };
  const unit = join(c.out, `${c.name}.service`);
  const logrotate = join(c.out, `${c.name}.logrotate`);
  const sysusers = join(c.out, `${c.name}.sysusers.conf`);
  const files: PlannedFile[] = [
    { path: unit, role: 'unit', text: await render('systemd.service', scope), mode: PUBLIC_MODE },
    { path: sysusers, role: 'sysusers', text: await render('sysusers.conf', scope), mode: PUBLIC_MODE },
    ...(logFile ? [{ path: logrotate, role: 'logrotate' as const, text: await render('logrotate', scope), mode: PUBLIC_MODE }] : []),
    ...usersFile(c),
  ];
  if (logFile && !logsDirectory)
    c.warnings.push(`The unit can write only ${debian.logDir}/${c.name}/; for ${logFile}, add ReadWritePaths=${dirname(logFile)} to it.`);
  const binary = exec.length === 1 && exec[0] === debian.binary;
  return {
    files,
    reads: {
      cert: c.cert,
      key: c.key,
      ...(options.ca ? { ca: resolve(options.ca) } : {}),
      ...(c.users && c.users.text === undefined ? { htpasswd: c.users.file } : {}),
    },
    nextSteps: (unowned) => [
      ...(binary ? [`sudo install -m 0755 <the depotkit executable> ${debian.binary}   # if it is not there yet`] : []),
      `sudo cp ${shellWord(sysusers)} ${debian.sysusersDir}/${c.name}.conf && sudo systemd-sysusers   # creates the user ${c.serviceUser}`,
      ...groupStep(
        c,
        [...unowned, ...files.filter((f) => f.mode === SECRET_MODE).map((f) => f.path)],
        [...(c.key ? [c.key] : []), ...(options.ca ? [join(resolve(options.ca), CA_KEY_FILE)] : [])],
      ),
      `sudo cp ${shellWord(unit)} ${debian.unitDir}/${c.name}.service${logFile ? ` && sudo cp ${shellWord(logrotate)} ${debian.logrotateDir}/${c.name}` : ''}`,
      `sudo systemd-analyze verify ${debian.unitDir}/${c.name}.service && sudo systemctl daemon-reload && sudo systemctl enable --now ${c.name}`,
      `sudo systemctl reload ${c.name}   # after renewing the certificate or changing the users: SIGHUP, downloads go on`,
      check,
    ],
  };
}
