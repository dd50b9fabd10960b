// Benchmark: the installer commands over a fleet the size of a large site. An inventory of
// TOTAL consumers of which REACHABLE are simulated installers (one port each, sharing one
// self-signed certificate) and the rest closed ports on 127.0.0.1 (checked closed, below the
// ephemeral range so that no connection of the run can land on one). Phases (PHASES, a list):
//   push       `installer connect-depot --inventory <reachable> --trust-ca ... --no-sync`: the CA
//              imported and the depot set (each installer validates the depot), fresh simulators;
//   push-sync  the same with the sync (the installers read the depot's metadata, polled);
//   status     `installer status --inventory <all>`;
// each with the default concurrency and timeouts, through `node <dist>/cli/main.js` under
// /usr/bin/time (wall, CPU, peak RSS of the CLI). The simulators run in processes of their own
// (fleet-sims.ts, SIM_PROCS of them, 1 by default), from the build under test; their CPU (from
// /proc) is the installers' cost, not the client's; the depot is served by this process, whose CPU
// is the depot's. Builds: this one (THIS_DIST, by default dist/) and, with DIST=<a copy of an
// older build>, that one, alternated over ROUNDS, each run killed after LIMIT seconds (120).
// CURL=1 adds the push by hand for the push phase: curl per installer (token, import, depot PUT),
// as many installers at a time as the CLI's default concurrency, against this build's simulators.
//   npm run build
//   [THIS_DIST=<a copy of this build: others may rebuild dist/ meanwhile>] [DIST=/tmp/old-dist] [ROUNDS=1] [LIMIT=120]
//   [CPU_PROF=dir] [SIM_PROF=dir] [CLI_NODE_FLAGS='...'] [PHASES=push,status] [SIM_PROCS=1] [CURL=1] [INVENTORY=json]
//   npx tsx scripts/bench/fleet-scale.ts [total 10000] [reachable 200] [-- extra CLI flags]
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { limiter } from '../../src/util/limit.js';
import { INSTALLER_API, TRUSTED_FOR_OUTBOUND } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { INSTALLER_DEFAULTS } from '../../src/installer/defaults.js';
import { createCa, issueServerCert, selfSignedServerCertificate } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';

const run = promisify(execFile);
const args = process.argv.slice(2);
const dashes = args.indexOf('--');
const extra = dashes >= 0 ? args.slice(dashes + 1) : [];
const positional = dashes >= 0 ? args.slice(0, dashes) : args;
const total = Number(positional[0] ?? 10_000);
const reachable = Number(positional[1] ?? 200);
const rounds = Number(process.env.ROUNDS ?? 1);
const limitSeconds = Number(process.env.LIMIT ?? 120);
const phases = (process.env.PHASES ?? 'push,status').split(',');
const simProcs = Math.max(1, Number(process.env.SIM_PROCS ?? 1));
const builds: Array<[string, string]> = [['this build', process.env.THIS_DIST ?? join(import.meta.dirname, '../../dist')]];
if (process.env.DIST) builds.push(['DIST', process.env.DIST]);
if (process.env.CURL === '1') builds.push(['curl', '']);

const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-fleet-'));
const USER = 'admin@local';
const PASSWORD = 'Bench-Fleet-1!';
const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'Bench-Depot-1!';
/** Closed ports are taken from here up: below the ephemeral range (32768 on Linux), so no local port of the run is among them. */
const FIRST_CLOSED_PORT = 20_000;
/** CPU_PROF=<dir>: the CLI writes a CPU profile there; SIM_PROF=<dir>: the simulators do (node --cpu-prof). */
const cpuProf = (dir: string | undefined) => (dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []);
/** Node's flags for the CLI: CLI_NODE_FLAGS (space-separated, `--heap-prof --heap-prof-dir d` say), and the CPU profile. */
const cliNodeFlags = [...(process.env.CLI_NODE_FLAGS ?? '').split(' ').filter(Boolean), ...cpuProf(process.env.CPU_PROF)];
const CLK_TCK = Number((await run('getconf', ['CLK_TCK'])).stdout.trim());
const files = {
  depotCa: join(work, 'depot-ca.pem'),
  installerCert: join(work, 'installer.pem'),
  installerKey: join(work, 'installer-key.pem'),
  password: join(work, 'password'),
  depotPassword: join(work, 'depot-password'),
  tokenRequest: join(work, 'token.json'),
  importRequest: join(work, 'import.json'),
  depotRequest: join(work, 'depot.json'),
};

interface Measured {
  wall: number;
  cpu: number;
  rssMiB: number;
  ok: number;
  failed: number;
  simCpu: number;
  depotCpu: number;
  load: number;
  note?: string;
}

/** Ports nothing listens on: each tried once, those that answer skipped. */
async function closedPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  const limit = limiter(200);
  let next = FIRST_CLOSED_PORT;
  while (ports.length < n) {
    const batch = Array.from({ length: n - ports.length }, () => next++);
    if (next > 32_000) throw new Error('not enough closed ports below the ephemeral range');
    const open = await Promise.all(batch.map((port) => limit(() => answers(port))));
    ports.push(...batch.filter((_, i) => !open[i]));
  }
  return ports;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function setup() {
  await makeDemoDepot(join(work, 'depot'), { binarySize: 1024, signingDir: join(work, 'signing') });
  const ca = await createCa({ keySize: 2048 });
  const depotCert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  const depot = await startDepotServer({
    root: join(work, 'depot'),
    tls: { certPem: depotCert.certPem, keyPem: depotCert.keyPem },
    auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
  });
  // The fleet shares one self-signed certificate: a key generation per installer would dominate the set-up.
  const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729);
  writeFileSync(files.depotCa, ca.certPem);
  writeFileSync(files.installerCert, tls.certPem);
  writeFileSync(files.installerKey, tls.keyPem, { mode: 0o600 });
  writeFileSync(files.password, `${PASSWORD}\n`, { mode: 0o600 });
  writeFileSync(files.depotPassword, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  writeFileSync(files.tokenRequest, JSON.stringify({ username: USER, password: PASSWORD }), { mode: 0o600 });
  writeFileSync(files.importRequest, JSON.stringify({ certificate: ca.certPem, certificateUsageType: TRUSTED_FOR_OUTBOUND }));
  writeFileSync(
    files.depotRequest,
    JSON.stringify({
      offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
      depotConfiguration: { isOfflineDepot: true, hostname: 'localhost', port: depot.port },
    }),
    { mode: 0o600 },
  );
  return { depot, closed: await closedPorts(total - reachable) };
}

const { depot, closed } = await setup();

/** CPU seconds of a process, from /proc (utime + stime). */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** CPU seconds of this process's waited-for children (curl). */
function childrenCpu(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / CLK_TCK;
}

interface Fleet {
  urls: string[];
  procs: ChildProcess[];
  cpu(): number;
  close(): Promise<void>;
}

/** `reachable` fresh simulators of `dist`, spread over `simProcs` processes. */
async function startFleet(dist: string): Promise<Fleet> {
  const script = join(import.meta.dirname, 'fleet-sims.ts');
  const procs = Array.from({ length: simProcs }, (_, i) => {
    const n = Math.floor(reachable / simProcs) + (i < reachable % simProcs ? 1 : 0);
    const argv = [...cpuProf(process.env.SIM_PROF), '--import', 'tsx', script, dist, String(n), files.installerCert, files.installerKey, USER, files.password];
    return spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  });
  const urls = await Promise.all(
    procs.map(
      (child) =>
        new Promise<string[]>((resolve, reject) => {
          let out = '';
          child.stdout!.setEncoding('utf8').on('data', (d: string) => {
            out += d;
            if (out.endsWith('\n')) resolve(JSON.parse(out) as string[]);
          });
          child.once('exit', (code) => reject(new Error(`the simulators exited with ${code}`)));
        }),
    ),
  );
  return {
    urls: urls.flat(),
    procs,
    cpu: () => procs.reduce((sum, p) => sum + cpuOf(p.pid!), 0),
    async close() {
      await Promise.all(procs.map((p) => new Promise((resolve) => (p.once('exit', resolve), p.stdin!.end()))));
    },
  };
}

/**
 * The inventory: reachable installers spread evenly among the closed ports, as a real site's would be;
 * YAML (flow-style entries), or JSON with INVENTORY=json.
 */
function writeInventory(file: string, urls: string[], withClosed: boolean): string {
  const entries: Array<{ name: string; url: string }> = [];
  const every = withClosed ? Math.max(1, Math.floor(total / Math.max(1, reachable))) : 1;
  let s = 0;
  let c = 0;
  for (let i = 0; s < urls.length || (withClosed && c < closed.length); i++) {
    if (s < urls.length && i % every === 0) entries.push({ name: `installer-${i}`, url: urls[s++]! });
    else if (withClosed && c < closed.length) entries.push({ name: `gone-${i}`, url: `https://127.0.0.1:${closed[c++]}` });
  }
  const defaults = { user: USER, passwordFile: 'password', installerCa: 'installer.pem' };
  const path = join(work, file);
  if (process.env.INVENTORY === 'json') writeFileSync(path, JSON.stringify({ defaults, installers: entries }, null, 1));
  else {
    const lines = entries.map((e) => `  - { name: ${e.name}, url: "${e.url}" }`);
    writeFileSync(path, ['defaults:', ...Object.entries(defaults).map(([k, v]) => `  ${k}: ${v}`), 'installers:', ...lines].join('\n'));
  }
  return path;
}

type Row = { ok: boolean; ms: number; error?: { message: string }; result?: { action?: string; trusted?: Array<{ action: string }> } };

/** What a run's rows say: counts, and the first reasons of the rows that failed or did not do what the phase asks. */
function judge(rows: Row[], expect: (r: Row) => boolean): Pick<Measured, 'ok' | 'failed' | 'note'> {
  const ms = rows.map((r) => r.ms).sort((a, b) => a - b);
  console.error(`row ms: median ${ms[ms.length >> 1]}, p90 ${ms[Math.floor(ms.length * 0.9)]}, max ${ms[ms.length - 1]}`);
  const failed = rows.filter((r) => !r.ok);
  const odd = rows.filter((r) => r.ok && !expect(r));
  const reasons = new Set([
    ...failed.map((r) => r.error?.message.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:<port>') ?? 'no error'),
    ...(odd.length > 0 ? [`${odd.length} rows not as expected: ${JSON.stringify(odd[0]!.result)}`] : []),
  ]);
  return { ok: rows.length - failed.length, failed: failed.length, note: [...reasons].slice(0, 3).join(' | ') };
}

/** Runs `work` while counting the CPU of the simulators and of the depot (this process). */
async function measured(fleet: Fleet, work: () => Promise<Omit<Measured, 'simCpu' | 'depotCpu' | 'load'>>): Promise<Measured> {
  const load = loadavg()[0]!;
  const sim = fleet.cpu();
  const own = process.cpuUsage();
  const result = await work();
  const depotCpu = process.cpuUsage(own);
  return { ...result, simCpu: fleet.cpu() - sim, depotCpu: (depotCpu.user + depotCpu.system) / 1e6, load };
}

/** Runs the CLI of `dist` under /usr/bin/time; the rows come from its --json. */
async function timed(dist: string, cliArgs: string[], expect: (r: Row) => boolean): Promise<Omit<Measured, 'simCpu' | 'depotCpu' | 'load'>> {
  const timeFile = join(work, 'time.txt');
  const started = process.hrtime.bigint();
  const { stdout, stderr, killed } = await new Promise<{ stdout: string; stderr: string; killed: boolean }>((resolve) => {
    const child = execFile(
      '/usr/bin/time',
      ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, ...cliNodeFlags, join(dist, 'cli/main.js'), ...cliArgs, ...extra, '--json'],
      { maxBuffer: 1 << 30, timeout: limitSeconds * 1000, killSignal: 'SIGKILL' },
      (err, out, errOut) => resolve({ stdout: out, stderr: errOut, killed: (err as { killed?: boolean } | null)?.killed === true }),
    );
    child.stdin?.end();
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  if (killed) return { wall, cpu: NaN, rssMiB: NaN, ok: 0, failed: 0, note: `killed after ${limitSeconds} s` };
  const [, user, system, rssKiB] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  if (!stdout.trim()) throw new Error(`${cliArgs.slice(0, 2).join(' ')} printed no report: ${stderr}`);
  const report = JSON.parse(stdout) as { installers: Row[] };
  return { wall, cpu: user! + system!, rssMiB: rssKiB! / 1024, ...judge(report.installers, expect) };
}

const depotFlags = ['--depot-host', 'localhost', '--depot-port', String(depot.port), '--depot-user', DEPOT_USER, '--depot-password-file', files.depotPassword];
/** A first push: the CA imported and the depot updated on every installer. */
const pushed = (r: Row) => r.result?.action === 'updated' && r.result.trusted?.[0]?.action === 'imported';

async function push(dist: string, sync: boolean): Promise<Measured> {
  const fleet = await startFleet(dist);
  try {
    const inventory = writeInventory('push.yaml', fleet.urls, false);
    const cli = ['installer', 'connect-depot', '--inventory', inventory, '--trust-ca', files.depotCa, ...depotFlags, ...(sync ? [] : ['--no-sync'])];
    return await measured(fleet, () => timed(dist, cli, pushed));
  } finally {
    await fleet.close();
  }
}

/** The push by hand: per installer a token, the CA imported, the depot PUT (curl waits for the validation). */
async function curlPush(): Promise<Measured> {
  const fleet = await startFleet(builds[0]![1]);
  const curl = (argv: string[]) =>
    run('curl', ['-sS', '--cacert', files.installerCert, '-H', 'content-type: application/json', ...argv], { maxBuffer: 1 << 20 });
  try {
    return await measured(fleet, async () => {
      const limit = limiter(INSTALLER_DEFAULTS.concurrency);
      const cpu = childrenCpu();
      const started = process.hrtime.bigint();
      const rows = await Promise.all(
        fleet.urls.map((url) =>
          limit(async (): Promise<Row> => {
            const t0 = Date.now();
            const token = (
              JSON.parse((await curl(['--data-binary', `@${files.tokenRequest}`, `${url}${INSTALLER_API.tokens}`])).stdout) as { accessToken: string }
            ).accessToken;
            const auth = ['-H', `authorization: Bearer ${token}`, '-o', '/dev/null', '-w', '%{http_code}'];
            const imported = (await curl([...auth, '--data-binary', `@${files.importRequest}`, `${url}${INSTALLER_API.trustedCertificates}`])).stdout;
            const depotSet = (await curl([...auth, '-X', 'PUT', '--data-binary', `@${files.depotRequest}`, `${url}${INSTALLER_API.depotSettings}`])).stdout;
            const ok = imported === '200' && depotSet === '202';
            return { ok, ms: Date.now() - t0, ...(ok ? {} : { error: { message: `import ${imported}, depot ${depotSet}` } }) };
          }),
        ),
      );
      const wall = Number(process.hrtime.bigint() - started) / 1e9;
      return { wall, cpu: childrenCpu() - cpu, rssMiB: NaN, ...judge(rows, () => true) };
    });
  } finally {
    await fleet.close();
  }
}

async function status(dist: string): Promise<Measured> {
  const fleet = await startFleet(dist);
  try {
    const inventory = writeInventory('status.yaml', fleet.urls, true);
    return await measured(fleet, () => timed(dist, ['installer', 'status', '--inventory', inventory], () => true));
  } finally {
    await fleet.close();
  }
}

const results: Array<[string, string, Measured]> = [];
const names = {
  push: `push, ${reachable} installers (trust + depot)`,
  'push-sync': `push, ${reachable} installers (trust + depot + sync)`,
  status: `status, ${total} consumers (${total - reachable} refused)`,
};
for (let round = 1; round <= rounds; round++) {
  for (const [label, dist] of round % 2 === 1 ? builds : [...builds].reverse()) {
    for (const phase of phases) {
      if (label === 'curl' && phase !== 'push') continue;
      const m = label === 'curl' ? await curlPush() : phase === 'status' ? await status(dist) : await push(dist, phase === 'push-sync');
      results.push([names[phase as keyof typeof names] ?? phase, label, m]);
      console.error(
        `round ${round} ${label} ${phase}: ${m.wall.toFixed(2)} s, CLI ${m.cpu.toFixed(2)} s CPU, simulators ${m.simCpu.toFixed(2)}, depot ${m.depotCpu.toFixed(2)}`,
      );
    }
  }
}
await depot.close();
rmSync(work, { recursive: true, force: true });

const f = (n: number, digits = 2) => (Number.isNaN(n) ? '-' : n.toFixed(digits));
console.log(`| run | build | load | wall s | client CPU s | client peak RSS MiB | rows ok / failed | simulators' CPU s | depot's CPU s | failures |`);
console.log(`|---|---|---|---|---|---|---|---|---|---|`);
for (const [name, label, m] of results) {
  console.log(
    `| ${name} | ${label} | ${f(m.load, 1)} | ${f(m.wall)} | ${f(m.cpu)} | ${f(m.rssMiB, 0)} | ${m.ok} / ${m.failed} | ${f(m.simCpu)} | ${f(m.depotCpu)} | ${m.note ?? ''} |`,
  );
}
if (rounds > 1) {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`\n| run | build | rounds | median wall s | median client CPU s | median simulators' CPU s | median depot's CPU s |`);
  console.log(`|---|---|---|---|---|---|---|`);
  for (const name of new Set(results.map(([n]) => n))) {
    for (const [label] of builds) {
      const ms = results.filter(([n, l]) => n === name && l === label).map(([, , m]) => m);
      if (ms.length === 0) continue;
      const med = (pick: (m: Measured) => number) => f(median(ms.map(pick)));
      console.log(`| ${name} | ${label} | ${ms.length} | ${med((m) => m.wall)} | ${med((m) => m.cpu)} | ${med((m) => m.simCpu)} | ${med((m) => m.depotCpu)} |`);
    }
  }
}
