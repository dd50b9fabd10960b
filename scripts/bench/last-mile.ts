// Benchmark: the last mile. A whole 9.0 demo release (16 bundles) downloaded at once by N
// simulated installers, each in its own process (`depotkit sim installer`, which fetches every
// binary over TLS with Basic auth and checks its SHA-256), from `depotkit serve` and then from
// nginx (Debian's, worker_processes auto, sendfile), same files, same certificate. Reports the
// wall time from the first download request to the last validated bundle, the aggregate rate,
// the ratio, and the depot server's peak memory (summed RSS of its processes). Usage:
//   npx tsx scripts/bench/last-mile.ts [binary size, default 1G] [installers, default 4]
// (run `npm run build` first: the CLI under test is dist/cli/main.js)
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEPOT_PATHS } from '../../src/constants.js';
import { InstallerClient, downloadRelease, ensureTrusted, pushDepot, syncDepot } from '../../src/installer/index.js';

const run = promisify(execFile);
const size = process.argv[2] ?? '1G';
const installers = Number(process.argv[3] ?? 4);
const cli = join(import.meta.dirname, '../../dist/cli/main.js');
const work = join('/var/tmp', `depotkit-bench-last-mile-${size}`);
const ADMIN_PASSWORD = 'Bench-Installer-1!';
const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'Bench-Depot-1!';
const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
if (!nginxBin) throw new Error('nginx is needed: apt-get install -y nginx-light');

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const depotkit = (args: string[]) => run(process.execPath, [cli, ...args], { maxBuffer: 1 << 24 });

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Summed RSS (KiB) of a process and its children. */
function rssKb(pid: number): number {
  const pids = [
    pid,
    ...execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number),
  ].filter(Boolean);
  let total = 0;
  for (const p of pids) {
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

function pgrepSafe(pid: number): number {
  try {
    return rssKb(pid);
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------- the depot
mkdirSync(work, { recursive: true });
const root = join(work, 'depot');
if (!existsSync(join(root, DEPOT_PATHS.catalog))) {
  console.error(`making a 9.0 demo depot with ${size} binaries in ${root} ...`);
  await depotkit(['depot', 'demo', root, '--release', '9.0', '--binary-size', size, '--force']);
}
if (!existsSync(join(work, 'pki/server/server-chain.pem'))) {
  await depotkit(['cert', 'ca', '--out', join(work, 'pki/ca'), '--key-size', '2048', '--force']);
  await depotkit(['cert', 'issue', '--ca', join(work, 'pki/ca'), '--dns', 'localhost', '--ip', '127.0.0.1', '--out', join(work, 'pki/server'), '--force']);
}
const caPem = readFileSync(join(work, 'pki/ca/ca-cert.pem'), 'utf8');
const chain = join(work, 'pki/server/server-chain.pem');
const key = join(work, 'pki/server/server-key.pem');
writeFileSync(join(work, 'admin.pass'), `${ADMIN_PASSWORD}\n`, { mode: 0o600 });
writeFileSync(join(work, 'depot.pass'), `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
const release = (JSON.parse(readFileSync(join(root, DEPOT_PATHS.manifest), 'utf8')) as { releases: Array<{ version: string }> }).releases[0]!.version;
const binaries = readdirSync(join(root, DEPOT_PATHS.comp), { recursive: true, withFileTypes: true }).filter(
  (e) => e.isFile() && !e.parentPath.includes('Compatibility'),
);
const totalBytes = binaries.reduce((sum, e) => sum + Number(execFileSync('stat', ['-c', '%s', join(e.parentPath, e.name)], { encoding: 'utf8' })), 0);
// Page cache warm for both servers alike.
await run('sh', ['-c', `cat ${root}/PROD/COMP/*/* > /dev/null 2>&1 || true`]);

// ---------------------------------------------------------------- servers
interface Depot {
  name: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

async function startDepotkit(): Promise<Depot> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      cli,
      'serve',
      root,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--cert',
      chain,
      '--key',
      key,
      '--user',
      DEPOT_USER,
      '--password-file',
      join(work, 'depot.pass'),
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return { name: 'depotkit serve', port, pid: child.pid!, stop: () => stopChild(child) };
}

async function startNginx(): Promise<Depot> {
  const port = await freePort();
  const dir = join(work, 'nginx');
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  const hash = execFileSync('openssl', ['passwd', '-apr1', DEPOT_PASSWORD], { encoding: 'utf8' }).trim();
  writeFileSync(join(dir, 'htpasswd'), `${DEPOT_USER}:${hash}\n`);
  const t = join(dir, 'tmp');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
${process.geteuid?.() === 0 ? 'user root;' : ''}
worker_processes auto;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path ${t}; proxy_temp_path ${t}; fastcgi_temp_path ${t}; uwsgi_temp_path ${t}; scgi_temp_path ${t};
  types { application/json json; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${chain}; ssl_certificate_key ${key}; ssl_protocols TLSv1.2 TLSv1.3;
    root ${root};
    auth_basic "depot"; auth_basic_user_file ${join(dir, 'htpasswd')};
  }
}
`,
  );
  const child = spawn(nginxBin!, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'inherit' });
  for (let i = 0; i < 100 && (await fetchOk(port)) === false; i++) await new Promise((r) => setTimeout(r, 50));
  return { name: 'nginx', port, pid: child.pid!, stop: () => stopChild(child) };
}

async function fetchOk(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(true));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

// ---------------------------------------------------------------- simulated installers
interface Sim {
  url: string;
  caPem: string;
  child: ChildProcess;
}

async function startSims(): Promise<Sim[]> {
  return Promise.all(
    Array.from({ length: installers }, async (_, i) => {
      const certOut = join(work, `sim-${i}.pem`);
      const child = spawn(
        process.execPath,
        [cli, 'sim', 'installer', '--password-file', join(work, 'admin.pass'), '--cert-out', certOut, '--quiet', '--json'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const line = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString())));
      return { url: (JSON.parse(line) as { url: string }).url, caPem: readFileSync(certOut, 'utf8'), child };
    }),
  );
}

async function measure(depot: Depot): Promise<{ wall: number; peakMiB: number }> {
  const sims = await startSims();
  const clients = await Promise.all(
    sims.map((s) => InstallerClient.connect({ url: s.url, user: 'admin@local', password: ADMIN_PASSWORD, trust: { caPems: [s.caPem] } })),
  );
  try {
    for (const client of clients) {
      await ensureTrusted(client, [caPem]);
      const pushed = await pushDepot(client, { hostname: 'localhost', port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD });
      if (!pushed.ok) throw new Error(`depot refused: ${pushed.message}`);
      const synced = await syncDepot(client, { pollMs: 100 });
      if (!synced.ok) throw new Error(`sync failed: ${synced.message}`);
    }
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, pgrepSafe(depot.pid))), 100);
    const start = process.hrtime.bigint();
    const reports = await Promise.all(clients.map((c) => downloadRelease(c, { release, pollMs: 200 })));
    const wall = seconds(start);
    clearInterval(sampler);
    if (!reports.every((r) => r.ok))
      throw new Error(`downloads failed: ${JSON.stringify(reports.flatMap((r) => r.bundles.filter((b) => b.status !== 'SUCCESS')))}`);
    return { wall, peakMiB: Math.round(peak / 1024) };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(sims.map((s) => stopChild(s.child)));
  }
}

const results: Array<{ name: string; wall: number; peakMiB: number }> = [];
for (const start of [startDepotkit, startNginx]) {
  const depot = await start();
  try {
    const r = await measure(depot);
    results.push({ name: depot.name, ...r });
  } finally {
    await depot.stop();
  }
}

const gib = (totalBytes * installers) / 2 ** 30;
console.log(`${installers} installers x ${binaries.length} binaries (${(totalBytes / 2 ** 30).toFixed(2)} GiB each), release ${release}`);
for (const r of results) console.log(`${r.name.padEnd(15)} ${r.wall.toFixed(1)} s  ${(gib / r.wall).toFixed(2)} GiB/s  peak RSS ${r.peakMiB} MiB`);
const [ours, nginx] = results as [(typeof results)[0], (typeof results)[0]];
console.log(`ratio (nginx time / depotkit time): ${(nginx.wall / ours.wall).toFixed(2)}`);
if (process.env.KEEP !== '1') rmSync(join(work, 'nginx'), { recursive: true, force: true });
