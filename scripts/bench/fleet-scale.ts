// Benchmark: the installer commands over a fleet the size of a large site. An inventory of
// TOTAL consumers of which REACHABLE are simulated installers (in this process, one port each,
// sharing one self-signed certificate) and the rest closed ports on 127.0.0.1 (checked closed,
// below the ephemeral range so that no connection of the run can land on one):
//   1. `installer depot --inventory <reachable> --trust-ca` (trust + depot + sync), fresh simulators;
//   2. `installer status --inventory <all>`;
// both with the default concurrency and timeouts, through `node <dist>/cli/main.js` under
// /usr/bin/time (wall, CPU, peak RSS of the CLI). The simulators' CPU (this process) is measured
// apart: it is the installers' cost, not the client's. With DIST=<a copy of an older build> the
// same runs are made with it too, alternated, each killed after LIMIT seconds (120 by default).
//   npx tsc -p tsconfig.json
//   [THIS_DIST=<a copy of this build: others may rebuild dist/ meanwhile>] [DIST=/tmp/old-dist] [ROUNDS=1] [LIMIT=120] [CPU_PROF=dir] [PHASES=push,status] npx tsx scripts/bench/fleet-scale.ts [total 10000] [reachable 200] [-- extra CLI flags]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, selfSignedServerCertificate } from '../../src/pki/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';

const args = process.argv.slice(2);
const dashes = args.indexOf('--');
const extra = dashes >= 0 ? args.slice(dashes + 1) : [];
const positional = dashes >= 0 ? args.slice(0, dashes) : args;
const total = Number(positional[0] ?? 10_000);
const reachable = Number(positional[1] ?? 200);
const rounds = Number(process.env.ROUNDS ?? 1);
const limitSeconds = Number(process.env.LIMIT ?? 120);
const phases = (process.env.PHASES ?? 'push,status').split(',');
const builds: Array<[string, string]> = [['this build', process.env.THIS_DIST ?? join(import.meta.dirname, '../../dist')]];
if (process.env.DIST) builds.push(['DIST', process.env.DIST]);

const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-fleet-'));
const USER = 'admin@local';
const PASSWORD = 'Bench-Fleet-1!';
const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'Bench-Depot-1!';
/** Closed ports are taken from here up: below the ephemeral range (32768 on Linux), so no local port of the run is among them. */
const FIRST_CLOSED_PORT = 20_000;
/** CPU_PROF=<dir>: the CLI writes a CPU profile there (node --cpu-prof). */
const profile = process.env.CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.CPU_PROF] : [];

interface Measured {
  wall: number;
  cpu: number;
  rssMiB: number;
  ok: number;
  failed: number;
  killed: boolean;
  simCpu: number;
  note?: string;
}

/** Ports nothing listens on: each tried once, those that answer skipped. */
async function closedPorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  const limit = pLimit(200);
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
  const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729);
  writeFileSync(join(work, 'depot-ca.pem'), ca.certPem);
  writeFileSync(join(work, 'installer.pem'), tls.certPem);
  writeFileSync(join(work, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
  writeFileSync(join(work, 'depot-password'), `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  return { depot, tls, closed: await closedPorts(total - reachable) };
}

const { depot, tls, closed } = await setup();

async function startFleet(): Promise<InstallerSimulator[]> {
  const sims: InstallerSimulator[] = [];
  for (let i = 0; i < reachable; i++) sims.push(await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls }));
  return sims;
}

/** The inventory: reachable installers spread evenly among the closed ports, as a real site's would be. */
function writeInventory(file: string, sims: InstallerSimulator[], withClosed: boolean): string {
  const entries: string[] = [];
  const every = withClosed ? Math.max(1, Math.floor(total / Math.max(1, reachable))) : 1;
  let s = 0;
  let c = 0;
  for (let i = 0; s < sims.length || (withClosed && c < closed.length); i++) {
    if (s < sims.length && i % every === 0) entries.push(`  - { name: installer-${i}, url: "${sims[s++]!.url}" }`);
    else if (withClosed && c < closed.length) entries.push(`  - { name: gone-${i}, url: "https://127.0.0.1:${closed[c++]}" }`);
  }
  const path = join(work, file);
  writeFileSync(path, ['defaults:', `  user: ${USER}`, '  passwordFile: password', '  installerCa: installer.pem', 'installers:', ...entries].join('\n'));
  return path;
}

/** Runs the CLI of `dist` under /usr/bin/time; the rows come from its --json. */
async function timed(dist: string, cliArgs: string[]): Promise<Measured> {
  const timeFile = join(work, 'time.txt');
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const { stdout, stderr, killed } = await new Promise<{ stdout: string; stderr: string; killed: boolean }>((resolve) => {
    const child = execFile(
      '/usr/bin/time',
      ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, ...profile, join(dist, 'cli/main.js'), ...cliArgs, ...extra, '--json'],
      { maxBuffer: 1 << 30, timeout: limitSeconds * 1000, killSignal: 'SIGKILL' },
      (err, out, errOut) => resolve({ stdout: out, stderr: errOut, killed: (err as { killed?: boolean } | null)?.killed === true }),
    );
    child.stdin?.end();
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const sim = process.cpuUsage(cpuBefore);
  const simCpu = (sim.user + sim.system) / 1e6;
  if (killed) return { wall, cpu: NaN, rssMiB: NaN, ok: 0, failed: 0, killed, simCpu, note: `killed after ${limitSeconds} s` };
  const [, user, system, rssKiB] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  if (!stdout.trim()) throw new Error(`${cliArgs.slice(0, 2).join(' ')} printed no report: ${stderr}`);
  const report = JSON.parse(stdout) as { installers: Array<{ ok: boolean; ms: number; error?: { message: string } }> };
  const ms = report.installers.map((r) => r.ms).sort((a, b) => a - b);
  console.error(`row ms: median ${ms[ms.length >> 1]}, p90 ${ms[Math.floor(ms.length * 0.9)]}, max ${ms[ms.length - 1]}`);
  const failed = report.installers.filter((r) => !r.ok);
  const reasons = new Set(failed.map((r) => r.error?.message.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:<port>') ?? 'no error'));
  return {
    wall,
    cpu: user! + system!,
    rssMiB: rssKiB! / 1024,
    ok: report.installers.length - failed.length,
    failed: failed.length,
    killed,
    simCpu,
    note: [...reasons].slice(0, 3).join(' | '),
  };
}

async function push(dist: string): Promise<Measured> {
  const sims = await startFleet();
  try {
    const inventory = writeInventory('push.yaml', sims, false);
    return await timed(dist, [
      ...['installer', 'depot', '--inventory', inventory, '--trust-ca', join(work, 'depot-ca.pem')],
      ...['--depot-host', 'localhost', '--depot-port', String(depot.port), '--depot-user', DEPOT_USER, '--depot-password-file', join(work, 'depot-password')],
    ]);
  } finally {
    await Promise.all(sims.map((s) => s.close()));
  }
}

async function status(dist: string): Promise<Measured> {
  const sims = await startFleet();
  try {
    return await timed(dist, ['installer', 'status', '--inventory', writeInventory('status.yaml', sims, true)]);
  } finally {
    await Promise.all(sims.map((s) => s.close()));
  }
}

const results: Array<[string, string, Measured]> = [];
for (let round = 1; round <= rounds; round++) {
  for (const [label, dist] of round % 2 === 1 ? builds : [...builds].reverse()) {
    if (phases.includes('push')) results.push([`push, ${reachable} installers (trust + depot + sync)`, label, await push(dist)]);
    if (phases.includes('status')) results.push([`status, ${total} consumers (${total - reachable} refused)`, label, await status(dist)]);
    console.error(`round ${round} ${label} done`);
  }
}
await depot.close();
rmSync(work, { recursive: true, force: true });

const f = (n: number, digits = 2) => (Number.isNaN(n) ? '-' : n.toFixed(digits));
console.log(`| run | build | wall s | CLI CPU s | CLI peak RSS MiB | rows ok / failed | simulators' CPU s | failures |`);
console.log(`|---|---|---|---|---|---|---|---|`);
for (const [name, label, m] of results) {
  console.log(`| ${name} | ${label} | ${f(m.wall)} | ${f(m.cpu)} | ${f(m.rssMiB, 0)} | ${m.ok} / ${m.failed} | ${f(m.simCpu)} | ${m.note ?? ''} |`);
}
