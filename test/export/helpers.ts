import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEPOT_PATHS, UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { tempDir } from '../helpers/temp.js';
import { NGINX } from '../helpers/nginx.js';
import { startJavaProbes, type JavaProbes } from '../helpers/java.js';

export { JAVA } from '../helpers/java.js';
import { ended, freePorts, untilAccepting } from '../helpers/ports.js';
import { afterAll, beforeAll } from 'vitest';

export { NGINX };
export const run = promisify(execFile);

/** Debian's binaries of the servers exported for; a test of a server that is missing is skipped. */
export const APACHE = ['/usr/sbin/apache2', '/usr/sbin/httpd'].find((p) => existsSync(p));
const APACHE_MODULES = ['/usr/lib/apache2/modules', '/usr/lib64/httpd/modules'].find((p) => existsSync(p));
export const CADDY = ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p));
export const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
export const LOGROTATE = ['/usr/sbin/logrotate', '/sbin/logrotate'].find((p) => existsSync(p));

/** As root, servers switch their workers to this user, as in production: it must read the users file through its group. */
const IS_ROOT = process.getuid?.() === 0;
const WORKER_USER = 'www-data';

export const HOST = 'depot.test';
export const USER = 'depot';
export const PASSWORD = 'Dep0t-Secret';
/** A file no client may ever read, at the root and beside the open HCL files. */
export const SECRET_TEXT = 'never-served-secret';
/** Under the open patch store, a symlink to the catalog. */
export const LINKED_CATALOG = `${UMDS_PATCH_STORE_DIR}/catalog-link.json`;

export interface Fixture {
  dir: string;
  root: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  passwordFile: string;
  hostsFile: string;
  cleanup(): Promise<void>;
}

/**
 * A demo depot, a CA and a certificate for depot.test, a password file: in a temporary folder
 * that a server's worker user can traverse (the depot's files are world-readable, as depot build makes them).
 */
export async function makeFixture(): Promise<Fixture> {
  const { dir, cleanup } = await tempDir('depotkit-export-');
  await chmod(dir, 0o755);
  const root = join(dir, 'depot');
  await makeDemoDepot(root, { binarySize: 16 });
  for (const hidden of ['.secret', 'PROD/vsan/hcl/.hidden', 'PROD/.depotkit-tmp-0123-part.iso', '.depotkit/verified.json']) {
    await mkdir(join(root, hidden, '..'), { recursive: true });
    await writeFile(join(root, hidden), SECRET_TEXT, { mode: 0o644 });
  }
  // A symlink under an open prefix that leads into the protected tree.
  await mkdir(join(root, UMDS_PATCH_STORE_DIR));
  await symlink(join(root, DEPOT_PATHS.catalog), join(root, LINKED_CATALOG));
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: [HOST], ips: ['127.0.0.1'], keySize: 2048 });
  const caFile = join(dir, 'ca.pem');
  const certFile = join(dir, 'server-chain.pem');
  const keyFile = join(dir, 'server-key.pem');
  await writeFile(caFile, ca.certPem);
  await writeFile(certFile, issued.chainPem);
  await writeFile(keyFile, issued.keyPem, { mode: 0o600 });
  const passwordFile = join(dir, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  // Java resolves the depot's name through this file, as through DNS.
  const hostsFile = join(dir, 'hosts');
  await writeFile(hostsFile, `127.0.0.1 ${HOST}\n`);
  return { dir, root, caFile, certFile, keyFile, passwordFile, hostsFile, cleanup };
}

/** `depotkit export <target>` of the fixture's depot into `out`, on 127.0.0.1:`port`, with its certificate and user. */
export function exportArgs(f: Fixture, target: string, out: string, port: number): string[] {
  const where = ['--out', out, '--host', '127.0.0.1', '--port', String(port)];
  const tlsAndUser = ['--cert', f.certFile, '--key', f.keyFile, '--user', USER, '--password-file', f.passwordFile];
  return ['export', target, f.root, ...where, ...tlsAndUser];
}

export interface RunningServer {
  port: number;
  /**
   * What `systemctl reload` runs for Debian's package of this server, for this test's instance: the
   * configuration tested, then the server's graceful reload (the export's next steps end with it).
   */
  reloadCommand: string;
  /** The server's own error output so far, for failure messages. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** Until the server listens; fails at once if it ended first, and either way with its output. */
async function waitForPort(port: number, child: ChildProcess, log: () => Promise<string>): Promise<void> {
  await untilAccepting(port, `the server on port ${port}`, { everyMs: 50, failIf: ended(child) }).catch(async (e: Error) => {
    throw new Error(`${e.message}: ${await log()}`);
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
}

function collect(child: ChildProcess): () => string {
  let text = '';
  child.stdout?.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

/** Runs an exported nginx site file: a minimal nginx.conf in `dir` that includes it, as conf.d/ would. */
export async function startNginxSite(site: string, port: number, dir: string): Promise<RunningServer> {
  const conf = join(dir, 'nginx.conf');
  const t = join(dir, 'tmp');
  await mkdir(t, { recursive: true });
  await writeFile(
    conf,
    `${IS_ROOT ? `user ${WORKER_USER};\n` : ''}daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path ${t}; proxy_temp_path ${t}; fastcgi_temp_path ${t}; uwsgi_temp_path ${t}; scgi_temp_path ${t};
  include ${site};
}
`,
  );
  const args = ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf];
  const child = spawn(NGINX!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const log = async () => `${output()}${await readFile(join(dir, 'error.log'), 'utf8').catch(() => '')}`;
  await waitForPort(port, child, log);
  const nginx = [NGINX!, ...args].join(' ');
  return { port, reloadCommand: `${nginx} -t && ${nginx} -s reload`, log, stop: stopper(child) };
}

/**
 * Runs an exported Apache virtual host with mpm_event and the modules Debian enables by default
 * (autoindex, negotiation, deflate and dir among them, which the virtual host must neutralise),
 * plus the ones the export asks for.
 */
export async function startApacheSite(site: string, port: number, dir: string): Promise<RunningServer> {
  const modules = [
    'mpm_event',
    'authz_core',
    'authz_host',
    'authn_core',
    'authn_file',
    'authz_user',
    'auth_basic',
    'access_compat',
    'alias',
    'mime',
    'dir',
    'autoindex',
    'deflate',
    'filter',
    'env',
    'setenvif',
    'negotiation',
    'reqtimeout',
    'ssl',
    'socache_shmcb',
    'allowmethods',
    'headers',
  ];
  const conf = join(dir, 'httpd.conf');
  await writeFile(
    conf,
    `${modules.map((m) => `LoadModule ${m}_module ${APACHE_MODULES}/mod_${m}.so`).join('\n')}
ServerRoot ${dir}
ServerName localhost
Listen 127.0.0.1:${port}
PidFile ${join(dir, 'httpd.pid')}
DefaultRuntimeDir ${dir}
Mutex file:${dir} default
ErrorLog ${join(dir, 'error.log')}
LogLevel warn
${IS_ROOT ? `User ${WORKER_USER}\nGroup ${WORKER_USER}` : ''}
TypesConfig /etc/mime.types
AddType application/x-gzip .gz .tgz
AddOutputFilterByType DEFLATE text/html text/plain application/json
SSLSessionCache shmcb:${join(dir, 'ssl_scache')}(512000)
Include ${site}
`,
  );
  const child = spawn(APACHE!, ['-f', conf, '-DFOREGROUND'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child);
  const log = async () => `${output()}${await readFile(join(dir, 'error.log'), 'utf8').catch(() => '')}`;
  await waitForPort(port, child, log);
  // Debian's apache2.service reloads with `apachectl graceful`: the configuration tested, then -k graceful.
  const apache = `${APACHE!} -f ${conf}`;
  return { port, reloadCommand: `${apache} -t && ${apache} -k graceful`, log, stop: stopper(child) };
}

/** The user Debian's caddy.service runs Caddy as, when the tests run as root and the package made it. */
export const CADDY_USER = IS_ROOT
  ? await Promise.all([run('id', ['-u', 'caddy']), run('id', ['-g', 'caddy'])]).then(
      ([uid, gid]) => ({ uid: Number(uid.stdout), gid: Number(gid.stdout) }),
      () => undefined,
    )
  : undefined;

/**
 * Runs an exported Caddyfile as it is, but for its admin endpoint (on a free port of its own, so that
 * several can run at once and each can be reloaded), with Caddy's data in `dir`; Caddy's adapter must not
 * warn about it. With `asCaddyUser` (and the tests run as root), Caddy runs as the caddy user, as Debian's
 * caddy.service runs it: it reads only what that user may.
 */
export async function startCaddyfile(caddyfile: string, port: number, dir: string, options: { asCaddyUser?: boolean } = {}): Promise<RunningServer> {
  const copy = join(dir, 'Caddyfile');
  // Not the site's port, released just before (the kernel may pick it again): of two ports held at once, one differs.
  const admin = (await freePorts(2)).find((p) => p !== port)!;
  // The exported file opens with its global options block.
  await writeFile(copy, (await readFile(caddyfile, 'utf8')).replace(/^\{$/m, `{\n\tadmin 127.0.0.1:${admin}`));
  const data = { HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
  const env = { ...process.env, ...data };
  const { stderr } = await run(CADDY!, ['adapt', '--config', copy, '--adapter', 'caddyfile'], { env });
  if (/"level":"(warn|error)"/.test(stderr)) throw new Error(`caddy adapt warned: ${stderr}`);
  const user = options.asCaddyUser ? CADDY_USER : undefined;
  if (user) await chown(dir, user.uid, user.gid);
  const child = spawn(CADDY!, ['run', '--config', copy, '--adapter', 'caddyfile'], { env, stdio: ['ignore', 'pipe', 'pipe'], ...user });
  const output = collect(child);
  const log = async () => output();
  await waitForPort(port, child, log);
  // Debian's caddy.service reloads with `caddy reload --config /etc/caddy/Caddyfile --force`; the export validates first.
  const withData = `${Object.entries(data)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')} ${CADDY!}`;
  const config = `--config ${copy} --adapter caddyfile`;
  return { port, reloadCommand: `${withData} validate ${config} && ${withData} reload ${config} --force`, log, stop: stopper(child) };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTPS request with the path sent exactly as given (no client-side normalisation), trusting only the fixture's CA. */
export function fetchRaw(
  port: number,
  path: string,
  options: { ca: string; method?: string; auth?: boolean; headers?: Record<string, string> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: HOST, ...options.headers };
    if (options.auth) headers.authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const req = request({ host: '127.0.0.1', port, servername: HOST, ca: options.ca, path, method: options.method ?? 'GET', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('latin1').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let java: JavaProbes | undefined;

/**
 * Java's TLS client (the installer's stack) sends HEAD then GET of the catalog: its two output lines. One JVM per
 * test file, started by its first probe and stopped with the fixture of fixtureForFile.
 */
export function javaProbe(fixture: Fixture, port: number): Promise<string> {
  java ??= startJavaProbes({ hostsFile: fixture.hostsFile, user: USER, password: PASSWORD });
  return java.probe({ trust: fixture.caFile, url: `https://${HOST}:${port}` });
}

/** The fixture, made before a test file's tests and removed after them, with a fresh output folder in it per call of outDir. */
export function fixtureForFile(): Fixture & { outDir(): string } {
  const fixture = {} as Fixture & { outDir(): string };
  let n = 0;
  beforeAll(async () => {
    Object.assign(fixture, await makeFixture());
  });
  afterAll(async () => {
    await java?.stop();
    java = undefined;
    await fixture.cleanup?.();
  });
  fixture.outDir = () => join(fixture.dir, `out-${++n}`);
  return fixture;
}
