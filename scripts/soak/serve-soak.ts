// Soak test of `depotkit serve`: mixed load for a fixed time against the built CLI, while the server is
// reloaded, its certificate rotated and its worker killed, with every byte it sends checked and its
// processes' descriptors, memory and event-loop delay sampled. Not part of the test suite. Linux only
// (/proc). Everything listens and connects on loopback addresses (127.0.0.1; the wrong passwords come from
// 127.0.0.2, because serve's failure budget is per client address and would otherwise lock the good
// traffic out too), and everything stops by itself at the deadline.
//
//   npm run build            # or not: --build-head compiles the committed source instead
//   nice npx tsx scripts/soak/serve-soak.ts [--minutes 30] [options]
//
// Options (defaults in brackets):
//   --minutes N            load time [30]; then the load stops, the server is sampled at rest and stopped
//   --binary-size SIZE     size of each of the demo depot's 16 binaries, as depot demo takes it [64M]
//   --workers N            serve's processes (the primary and N - 1 forked workers) [2]
//   --downloads N          loops downloading whole binaries, each on a keep-alive connection [2]
//   --ranges N             loops of Range requests (random ranges, suffixes, open ends, a few unsatisfiable) [2]
//   --aborts N             loops of downloads cut by the client after a random number of bytes, new connection each [1]
//   --heads N              loops of back-to-back HEAD requests (the flood) [2]
//   --bad-auth-rate N      wrong-password requests a second, from 127.0.0.2 [20]
//   --pages-every S        seconds between rounds of /, / as JSON, /metrics, /healthz and /ca.pem [2]
//   --reload-every S       seconds between SIGHUPs to the primary [10]
//   --rotate-every S       seconds between certificate rotations (a new certificate from the same CA renamed
//                          over the served files, then the SIGHUP of that tick) [60]
//   --kill-every S         seconds between SIGKILLs of a worker (serve starts another) [120]
//   --kill-phase S         the kills' offset from the reload ticks [0: every kill falls on a rotation's tick, as the
//                          schedules above give; its SIGHUP follows once the certificate is issued, at times while
//                          serve is still starting the new worker]
//   --sample-every S       seconds between samples of fds, RSS and event-loop delay [10]
//   --gc-every S           seconds between full garbage collections in each serve process (SIGUSR2 to the
//                          monitor), whose heap left is the leak signal RSS cannot give; 0: only at rest [60]
//   --growth-from M        the minute from which growth of fds and RSS is judged [5]
//   --work DIR             work folder (depot, CA, logs); kept; a depot already there is reused [a new temp folder, removed]
//   --out FILE             the samples and the summary as JSON [/tmp/depotkit-soak-<time>.json]
//   --cli FILE             the CLI to run [a copy of dist/ taken at start, so a rebuild meanwhile changes nothing]
//   --build-head           compile the committed source (git HEAD) into the work folder and run that
//   --no-eld               do not preload the event-loop delay monitor into serve (the /healthz latency remains)
//
// serve's /metrics has no event-loop delay, so a module preloaded into each serve process (NODE_OPTIONS
// --import) samples it with perf_hooks.monitorEventLoopDelay; /healthz latency is measured too, as what a
// client sees of it (on a keep-alive connection, and on a new connection with its TLS handshake). The same
// module records V8's heap every sample and, at rest before and after the load, runs a full garbage
// collection first (on SIGUSR2), so that memory serve holds can be told from memory not yet collected.
// Exit code 0 when no byte was wrong, no request failed outside a worker's kill (each failure is logged with
// its connection: new, or reused after how long idle), every reload succeeded, no stale certificate was
// served (an older one on a new connection after a rotation's reload; reload-during-respawn.ts here
// reproduces that on its own) and serve stopped cleanly; 1 otherwise.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { catalogBinaries, parseCatalog } from '../../src/depot/index.js';
import { DEPOT_PATHS } from '../../src/constants.js';
import { exchange, loopAgent, type ConnectionInfo, type Endpoint, type ExchangeOptions, type ExchangeResult } from './client.js';
import { childrenOf, growth, isAlive, median, percentile, sampleProcess, type Growth, type ProcessSample } from './procfs.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    'binary-size': { type: 'string', default: '64M' },
    workers: { type: 'string', default: '2' },
    downloads: { type: 'string', default: '2' },
    ranges: { type: 'string', default: '2' },
    aborts: { type: 'string', default: '1' },
    heads: { type: 'string', default: '2' },
    'bad-auth-rate': { type: 'string', default: '20' },
    'pages-every': { type: 'string', default: '2' },
    'reload-every': { type: 'string', default: '10' },
    'rotate-every': { type: 'string', default: '60' },
    'kill-every': { type: 'string', default: '120' },
    'kill-phase': { type: 'string', default: '0' },
    'sample-every': { type: 'string', default: '10' },
    'gc-every': { type: 'string', default: '60' },
    'growth-from': { type: 'string', default: '5' },
    work: { type: 'string' },
    out: { type: 'string' },
    cli: { type: 'string' },
    'build-head': { type: 'boolean', default: false },
    'no-eld': { type: 'boolean', default: false },
  },
});

function num(name: keyof typeof args, min = 0): number {
  const n = Number(args[name]);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number of at least ${min}.`);
  return n;
}

const MINUTES = num('minutes', 0.1);
const WORKERS = num('workers', 1);
const RELOAD_MS = num('reload-every', 1) * 1000;
const ROTATE_EVERY_TICKS = Math.max(1, Math.round((num('rotate-every', 1) * 1000) / RELOAD_MS));
const KILL_MS = num('kill-every', 1) * 1000;
const KILL_PHASE_MS = num('kill-phase') * 1000;
const SAMPLE_MS = num('sample-every', 1) * 1000;
const GC_MS = num('gc-every') * 1000;
const GROWTH_FROM_MS = num('growth-from') * 60_000;
const PAGES_MS = num('pages-every', 0.1) * 1000;
const BAD_AUTH_RATE = num('bad-auth-rate');
const REQUEST_TIMEOUT_MS = 60_000;
/** A failure is put down to a kill when the kill came at most this long before the request started (a pooled connection to the dead worker) or while it ran. */
const KILL_MARGIN_MS = 1_000;
const USER = 'soak';
const PASSWORD = 'Soak-Depot-1!';
const HOST = '127.0.0.1';
const BAD_AUTH_ADDRESS = '127.0.0.2';
const SERVER_NAME = 'localhost';

const repo = resolve(import.meta.dirname, '../..');
const work = args.work ? resolve(args.work) : mkdtempSync(join(tmpdir(), 'depotkit-soak-'));
mkdirSync(work, { recursive: true });
const outFile = resolve(args.out ?? `/tmp/depotkit-soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** Runs a CLI command to its end; throws with its stderr when it fails. */
function run(command: string, argv: string[], cwd = repo): string {
  const r = spawnSync(command, argv, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${command} ${argv.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

// The CLI under test, in the work folder: other people may rebuild dist/ during a long run, and serve forks
// its workers from the files of its own dist/ each time one is replaced.
function prepareCli(): { cli: string; source: string } {
  if (args.cli) return { cli: resolve(args.cli), source: resolve(args.cli) };
  const app = join(work, 'app');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), readFileSync(join(repo, 'package.json')));
  symlinkSync(join(repo, 'node_modules'), join(app, 'node_modules'));
  const head = run('git', ['rev-parse', '--short', 'HEAD']).trim();
  if (args['build-head']) {
    const archive = spawnSync('git', ['archive', 'HEAD', 'src', 'tsconfig.json'], { cwd: repo, maxBuffer: 256 << 20 });
    if (archive.status !== 0) throw new Error(`git archive failed: ${archive.stderr.toString()}`);
    spawnSync('tar', ['-x', '-C', app], { input: archive.stdout });
    // tsc emits despite type errors; only a missing entry point is fatal.
    spawnSync(join(repo, 'node_modules/.bin/tsc'), ['-p', join(app, 'tsconfig.json')], { stdio: 'inherit' });
    if (!existsSync(join(app, 'dist/cli/main.js'))) throw new Error('Compiling HEAD gave no dist/cli/main.js.');
    return { cli: join(app, 'dist/cli/main.js'), source: `git HEAD ${head}, compiled` };
  }
  if (!existsSync(join(repo, 'dist/cli/main.js'))) throw new Error('No dist/cli/main.js: run npm run build, or give --build-head.');
  cpSync(join(repo, 'dist'), join(app, 'dist'), { recursive: true });
  const dirty = run('git', ['status', '--porcelain', 'src']).trim() !== '';
  return { cli: join(app, 'dist/cli/main.js'), source: `dist/ of the checkout at ${head}${dirty ? ' (src/ had uncommitted changes)' : ''}` };
}

const { cli, source: cliSource } = prepareCli();
const execFileAsync = promisify(execFile);
const depotkit = (...argv: string[]) => run(process.execPath, [cli, ...argv]);

// The depot, its CA and the first certificate.
const depot = join(work, 'depot');
const catalogPath = join(depot, DEPOT_PATHS.catalog);
if (!existsSync(catalogPath)) {
  log(`making the demo depot (16 binaries of ${args['binary-size']}) in ${depot}`);
  depotkit('depot', 'demo', depot, '--binary-size', String(args['binary-size']), '--force');
}
const binaries = catalogBinaries(parseCatalog(readFileSync(catalogPath, 'utf8'))).map((b) => ({
  ...b,
  fd: openSync(join(depot, b.path), 'r'),
}));
const metadataPaths = [DEPOT_PATHS.catalog, DEPOT_PATHS.manifest];
// In the page cache before the clock starts: the soak is about serve, not the disk.
for (const b of binaries) readFileSync(join(depot, b.path));
const depotBytes = binaries.reduce((sum, b) => sum + b.size, 0);

const caDir = join(work, 'ca');
if (!existsSync(join(caDir, 'ca-cert.pem'))) depotkit('cert', 'ca', '--out', caDir, '--key-size', '2048', '--force');
const caPem = readFileSync(join(caDir, 'ca-cert.pem'), 'utf8');
const tlsDir = join(work, 'tls');
mkdirSync(tlsDir, { recursive: true });
const certPath = join(tlsDir, 'cert.pem');
const keyPath = join(tlsDir, 'key.pem');
/** Fingerprint (SHA-256, as getPeerCertificate gives it) -> generation of the served certificate, 0 the first. */
const generations = new Map<string, number>();
let generation = -1;

/**
 * Issues a new server certificate from the CA and renames it over the served files (each rename atomic, the two
 * back to back, in one tick). Issued by a child process, so that the soak's own requests go on meanwhile.
 */
async function rotateCertificate(): Promise<number> {
  const out = join(work, 'issued');
  await execFileAsync(process.execPath, [cli, 'cert', 'issue', '--ca', caDir, '--dns', SERVER_NAME, '--ip', HOST, '--out', out, '--force']);
  const fp = new X509Certificate(readFileSync(join(out, 'server-cert.pem'))).fingerprint256;
  generations.set(fp, ++generation);
  renameSync(join(out, 'server-key.pem'), keyPath);
  renameSync(join(out, 'server-chain.pem'), certPath);
  return generation;
}
await rotateCertificate();
const passwordFile = join(work, 'password');
writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });

// The monitor each serve process loads before its own code (forked workers inherit NODE_OPTIONS): its event-loop
// delay and V8's memory every sample, and on SIGUSR2 (which serve does not use) a full garbage collection and a
// line marked gc, so that memory held at rest can be told from memory not yet collected.
const eldDir = join(work, 'eld');
rmSync(eldDir, { recursive: true, force: true });
mkdirSync(eldDir);
const ELD_RESOLUTION_MS = 10;
const eldModule = join(work, 'eld-monitor.mjs');
writeFileSync(
  eldModule,
  `import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread } from 'node:worker_threads';
if (isMainThread) {
  const h = monitorEventLoopDelay({ resolution: ${ELD_RESOLUTION_MS} });
  h.enable();
  const file = ${JSON.stringify(eldDir)} + '/eld-' + process.pid + '.jsonl';
  const mib = (n) => Math.round((n / 1048576) * 10) / 10;
  const write = (extra) => {
    const m = process.memoryUsage();
    const line = { t: Date.now(), max: h.max / 1e6, p99: h.percentile(99) / 1e6, mean: h.mean / 1e6, heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal), externalMiB: mib(m.external), arrayBuffersMiB: mib(m.arrayBuffers), ...extra };
    appendFileSync(file, JSON.stringify(line) + '\\n');
  };
  setInterval(() => {
    write({});
    h.reset();
  }, ${SAMPLE_MS}).unref();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  // Twice, a moment apart: the memory of array buffers freed by the first is counted as freed only after V8 swept it.
  process.on('SIGUSR2', () => {
    gc();
    setTimeout(() => {
      gc();
      write({ gc: true });
    }, 200);
  });
  // A first line at once: its file tells the soak that this process takes SIGUSR2 (by default the signal would end it).
  write({});
}
`,
);

// ---- serve ----------------------------------------------------------------------------------------------

const serveLog: string[] = [];
const lineWatchers = new Set<{ re: RegExp; done: (line: string | undefined) => void }>();
let serveExit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
let stopping = false;

const serveArgs = [
  cli,
  'serve',
  depot,
  '--host',
  HOST,
  '--port',
  '0',
  '--cert',
  certPath,
  '--key',
  keyPath,
  '--user',
  USER,
  '--password-file',
  passwordFile,
  '--workers',
  String(WORKERS),
  '--access-log',
  join(work, 'access.log'),
  '--grace',
  '5',
  '--json',
];
const serve: ChildProcess = spawn(process.execPath, serveArgs, {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: args['no-eld'] ? process.env : { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${eldModule}`.trim() },
});
process.once('exit', () => {
  if (serve.exitCode === null && serve.signalCode === null) serve.kill('SIGKILL');
});
let pending = '';
serve.stderr!.setEncoding('utf8').on('data', (d: string) => {
  pending += d;
  let nl: number;
  while ((nl = pending.indexOf('\n')) !== -1) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    serveLog.push(`${new Date().toISOString()} ${line}`);
    for (const w of [...lineWatchers]) if (w.re.test(line)) w.done(line);
  }
});
serve.once('exit', (code, signal) => {
  serveExit = { code, signal, at: Date.now() };
  if (!stopping) log(`serve exited before the end (${signal ?? code}): the run stops`);
});

/** The next line of serve's stderr that matches `re`, or undefined after `ms`. */
function nextLine(re: RegExp, ms: number): Promise<string | undefined> {
  return new Promise((resolveLine) => {
    const w = {
      re,
      done: (line: string | undefined) => {
        clearTimeout(timer);
        lineWatchers.delete(w);
        resolveLine(line);
      },
    };
    const timer = setTimeout(() => w.done(undefined), ms);
    lineWatchers.add(w);
  });
}

const ready = await new Promise<{ port: number; pid: number }>((resolveReady, reject) => {
  let out = '';
  serve.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    try {
      resolveReady(JSON.parse(out) as { port: number; pid: number });
    } catch {
      // Not the whole line yet.
    }
  });
  serve.once('exit', () => reject(new Error(`serve exited before it was ready:\n${serveLog.join('\n')}`)));
});
const primary = ready.pid;
log(`serve (${cliSource}) on https://${HOST}:${ready.port}, primary pid ${primary}, workers ${childrenOf(primary).join(', ')}; work folder ${work}`);

// ---- bookkeeping ----------------------------------------------------------------------------------------

interface Tally {
  ok: number;
  /** Failed while a worker was being killed (expected). */
  failedInKill: number;
  /** Failed otherwise (goal 0). */
  failed: number;
  bytes: number;
}
const tallies = new Map<string, Tally>();
const tally = (kind: string) => tallies.get(kind) ?? (tallies.set(kind, { ok: 0, failedInKill: 0, failed: 0, bytes: 0 }), tallies.get(kind)!);
const statusCounts = new Map<string, number>();
let wrongBytes = 0;
const wrongByteEvents: { kind: string; path: string; range?: string; wrong: number; at: number }[] = [];
const failures: {
  kind: string;
  path: string;
  reason: string;
  startedAt: number;
  endedAt: number;
  inKill: boolean;
  msFromKill?: number;
  /** From the nearest SIGHUP sent to the request's start. */
  msFromSighup?: number;
  connection: ConnectionInfo;
}[] = [];
const sighups: number[] = [];
const kills: { at: number; pid: number; replacedByPid?: number; replacedAfterMs?: number }[] = [];
const reloads: { at: number; rotation?: number; ms?: number; outcome: string }[] = [];
const staleCertificates: { at: number; served: number; expected: number; msSinceKill?: number }[] = [];
const unknownCertificates: { at: number; fingerprint: string }[] = [];
const certsSeen = new Map<number, number>();
let expected = { generation: 0, since: 0 };
let clientInFlight = 0;
let lastMetrics: { inFlight?: number; processes?: number; at?: number } = {};

const t0 = Date.now();
const deadline = t0 + MINUTES * 60_000;
let loadOver = false;
const running = () => !loadOver && serveExit === undefined && Date.now() < deadline;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const since = (at: number) => ((at - t0) / 1000).toFixed(1);

/** The kill closest to a request that ran from `start` to `end`, and whether it explains a failure. */
function killNear(start: number, end: number): { inKill: boolean; msFromKill?: number } {
  let best: number | undefined;
  for (const k of kills) {
    if (k.at >= start - KILL_MARGIN_MS && k.at <= end) return { inKill: true, msFromKill: k.at - start };
    const d = k.at - start;
    if (best === undefined || Math.abs(d) < Math.abs(best)) best = d;
  }
  return { inKill: false, msFromKill: best };
}

/** A time relative to a request's start, in words. */
const before = (ms: number) => (ms >= 0 ? `${ms} ms before its start` : `${-ms} ms after its start`);

function failed(kind: string, path: string, r: Pick<ExchangeResult, 'startedAt' | 'endedAt' | 'connection'>, reason: string): void {
  const near = killNear(r.startedAt, r.endedAt);
  const hup = sighups.reduce<number | undefined>(
    (best, at) => (best === undefined || Math.abs(r.startedAt - at) < Math.abs(best) ? r.startedAt - at : best),
    undefined,
  );
  const c = r.connection;
  const t = tally(kind);
  if (near.inKill) t.failedInKill++;
  else {
    t.failed++;
    log(
      `FAILED outside kills: ${kind} ${path}: ${reason} (at ${since(r.startedAt)} s, ${r.endedAt - r.startedAt} ms; ` +
        `${c.reused ? `connection reused after ${c.requestsBefore} requests, idle ${c.idleMs} ms` : 'new connection'}, port ${c.localPort}; ` +
        `${near.msFromKill === undefined ? 'no kill yet' : `the nearest kill ${before(-near.msFromKill)}`}, SIGHUP ${before(hup ?? NaN)})`,
    );
  }
  if (failures.length < 5_000) failures.push({ kind, path, reason, startedAt: r.startedAt, endedAt: r.endedAt, ...near, msFromSighup: hup, connection: c });
}

function countWrong(kind: string, path: string, r: ExchangeResult, range?: string): void {
  if (r.wrongBytes === 0) return;
  wrongBytes += r.wrongBytes;
  wrongByteEvents.push({ kind, path, range, wrong: r.wrongBytes, at: r.startedAt });
  log(`WRONG BYTES: ${r.wrongBytes} in ${kind} ${path}${range ? ` ${range}` : ''}`);
}

const endpoint: Endpoint = {
  host: HOST,
  port: ready.port,
  ca: caPem,
  servername: SERVER_NAME,
  // Which certificate each new connection was given: after a rotation's reload, never an older one.
  onConnection(socket, requestStartedAt) {
    if (socket.isSessionReused()) return;
    const fp = socket.getPeerCertificate().fingerprint256;
    const gen = generations.get(fp);
    if (gen === undefined) {
      unknownCertificates.push({ at: Date.now(), fingerprint: fp });
      return;
    }
    certsSeen.set(gen, (certsSeen.get(gen) ?? 0) + 1);
    if (gen < expected.generation && requestStartedAt > expected.since) {
      const lastKill = kills.at(-1);
      // Said once per rotation; each connection is counted.
      if (!staleCertificates.some((c) => c.expected === expected.generation))
        log(
          `STALE CERTIFICATE: generation ${gen} served ${Date.now() - expected.since} ms after the reload of generation ${expected.generation}` +
            (lastKill ? ` (the last worker kill ${Date.now() - lastKill.at} ms ago)` : ''),
        );
      staleCertificates.push({ at: Date.now(), served: gen, expected: expected.generation, msSinceKill: lastKill && Date.now() - lastKill.at });
    }
  },
};
const good = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const wrong = `Basic ${Buffer.from(`${USER}:not-the-password`).toString('base64')}`;
const agents: Agent[] = [];
const newAgent = (localAddress?: string) => {
  const a = loopAgent(localAddress);
  agents.push(a);
  return a;
};

async function send(kind: string, o: Omit<ExchangeOptions, 'timeoutMs'> & { timeoutMs?: number }): Promise<ExchangeResult> {
  clientInFlight++;
  try {
    const r = await exchange(endpoint, { timeoutMs: REQUEST_TIMEOUT_MS, ...o });
    const key = `${kind} ${r.status}`;
    statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);
    tally(kind).bytes += r.bytes;
    return r;
  } finally {
    clientInFlight--;
  }
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
const MiB = 1 << 20;

// ---- the load -------------------------------------------------------------------------------------------

async function downloadLoop(): Promise<void> {
  const agent = newAgent();
  while (running()) {
    const b = pick(binaries);
    const r = await send('download', {
      method: 'GET',
      path: `/${b.path}`,
      agent,
      headers: { authorization: good },
      compare: { fd: b.fd, offset: 0 },
      hash: true,
    });
    countWrong('download', b.path, r);
    if (r.error) failed('download', b.path, r, r.error);
    else if (r.status !== 200) failed('download', b.path, r, `status ${r.status}`);
    else if (Number(r.headers['content-length']) !== b.size || r.bytes !== b.size) failed('download', b.path, r, `${r.bytes} bytes, ${b.size} expected`);
    else if (r.sha256 !== b.checksum) {
      failed('download', b.path, r, `SHA-256 ${r.sha256} is not the catalog's ${b.checksum}`);
      // Counted as wrong bytes even when the byte comparison saw none (the local file would then differ from the catalog).
      if (r.wrongBytes === 0) countWrong('download', b.path, { ...r, wrongBytes: 1 });
    } else tally('download').ok++;
  }
}

/** A random Range header for a file of `size` bytes, and what a correct server answers. */
function randomRange(size: number): { header: string; start: number; end: number } | { header: string; unsatisfiable: true } {
  const roll = Math.random();
  if (roll < 0.05) return { header: `bytes=${size + between(0, 1000)}-`, unsatisfiable: true };
  if (roll < 0.15) {
    const n = between(1, 4 * MiB);
    return { header: `bytes=-${n}`, start: Math.max(0, size - n), end: size - 1 };
  }
  if (roll < 0.25) {
    const start = Math.max(0, size - between(1, 4 * MiB));
    return { header: `bytes=${start}-`, start, end: size - 1 };
  }
  const len = Math.min(size, roll < 0.6 ? between(1, 64 * 1024) : roll < 0.9 ? between(64 * 1024, 4 * MiB) : between(4 * MiB, 32 * MiB));
  const start = between(0, size - len);
  // Sometimes an end past the file's, which the server clamps.
  const last = Math.random() < 0.05 ? start + len - 1 + between(1, 1000) : start + len - 1;
  return { header: `bytes=${start}-${last}`, start, end: Math.min(last, size - 1) };
}

async function rangeLoop(): Promise<void> {
  const agent = newAgent();
  while (running()) {
    const b = pick(binaries);
    const range = randomRange(b.size);
    if ('unsatisfiable' in range) {
      const r = await send('range-416', { method: 'GET', path: `/${b.path}`, agent, headers: { authorization: good, range: range.header } });
      if (r.error) failed('range-416', b.path, r, r.error);
      else if (r.status !== 416 || r.headers['content-range'] !== `bytes */${b.size}`)
        failed('range-416', b.path, r, `status ${r.status}, ${r.headers['content-range']}`);
      else tally('range-416').ok++;
      continue;
    }
    const r = await send('range', {
      method: 'GET',
      path: `/${b.path}`,
      agent,
      headers: { authorization: good, range: range.header },
      compare: { fd: b.fd, offset: range.start },
    });
    countWrong('range', b.path, r, range.header);
    const want = `bytes ${range.start}-${range.end}/${b.size}`;
    if (r.error) failed('range', b.path, r, `${range.header}: ${r.error}`);
    else if (r.status !== 206 || r.headers['content-range'] !== want)
      failed('range', b.path, r, `${range.header}: status ${r.status}, ${r.headers['content-range']}, ${want} expected`);
    else if (r.bytes !== range.end - range.start + 1) failed('range', b.path, r, `${range.header}: ${r.bytes} bytes`);
    else tally('range').ok++;
  }
}

async function abortLoop(): Promise<void> {
  while (running()) {
    const b = pick(binaries);
    // Cut at the headers sometimes, otherwise after up to half the file (or 16 MiB); a range now and then.
    const withRange = Math.random() < 0.25;
    const start = withRange ? between(0, b.size - 1) : 0;
    const length = b.size - start;
    const abortAfter = Math.random() < 0.1 ? 0 : between(1, Math.max(1, Math.min(16 * MiB, Math.floor(length / 2))));
    const headers: Record<string, string> = { authorization: good, ...(withRange ? { range: `bytes=${start}-` } : {}) };
    const r = await send('abort', { method: 'GET', path: `/${b.path}`, agent: false, headers, compare: { fd: b.fd, offset: start }, abortAfter });
    countWrong('abort', b.path, r, headers.range);
    if (r.error) failed('abort', b.path, r, r.error);
    else if (r.status !== (withRange ? 206 : 200)) failed('abort', b.path, r, `status ${r.status}`);
    else if (!r.aborted) failed('abort', b.path, r, `ended after ${r.bytes} bytes before the client cut it at ${abortAfter}`);
    else tally('abort').ok++;
  }
}

async function headLoop(): Promise<void> {
  const agent = newAgent();
  while (running()) {
    const metadata = Math.random() < 0.1;
    const b = pick(binaries);
    const path = metadata ? pick(metadataPaths) : b.path;
    const r = await send('head', { method: 'HEAD', path: `/${path}`, agent, headers: { authorization: good } });
    if (r.error) failed('head', path, r, r.error);
    else if (r.status !== 200) failed('head', path, r, `status ${r.status}`);
    else if (!metadata && Number(r.headers['content-length']) !== b.size) failed('head', path, r, `Content-Length ${r.headers['content-length']}`);
    else tally('head').ok++;
  }
}

async function badAuthLoop(): Promise<void> {
  if (BAD_AUTH_RATE <= 0) return;
  const agent = newAgent(BAD_AUTH_ADDRESS);
  const gap = 1000 / BAD_AUTH_RATE;
  while (running()) {
    const started = Date.now();
    const r = await send('bad-auth', { method: 'GET', path: `/${DEPOT_PATHS.catalog}`, agent, headers: { authorization: wrong } });
    if (r.error) failed('bad-auth', DEPOT_PATHS.catalog, r, r.error);
    else if (r.status !== 401 && r.status !== 429) failed('bad-auth', DEPOT_PATHS.catalog, r, `status ${r.status} for a wrong password`);
    else tally('bad-auth').ok++;
    await sleep(Math.max(0, gap - (Date.now() - started)));
  }
}

const metricValue = (text: string, name: string) => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

/** Whether a page's answer is right; a reason when not. */
type Check = (r: ExchangeResult) => string | undefined;
const pages: { kind: string; path: string; headers: Record<string, string>; check: Check }[] = [
  {
    kind: 'status-html',
    path: '/',
    headers: { authorization: good },
    check: (r) => (r.status === 200 && /<html/i.test(r.body!.toString()) ? undefined : `status ${r.status}, ${r.headers['content-type']}`),
  },
  {
    kind: 'status-json',
    path: '/',
    headers: { authorization: good, accept: 'application/json' },
    check: (r) => {
      if (r.status !== 200) return `status ${r.status}`;
      try {
        JSON.parse(r.body!.toString());
        return undefined;
      } catch {
        return 'not JSON';
      }
    },
  },
  {
    kind: 'metrics',
    path: '/metrics',
    headers: { authorization: good },
    check: (r) => {
      if (r.status !== 200) return `status ${r.status}`;
      const text = r.body!.toString();
      lastMetrics = { inFlight: metricValue(text, 'depotkit_downloads_in_flight'), processes: metricValue(text, 'depotkit_serving_processes'), at: Date.now() };
      return lastMetrics.inFlight === undefined ? 'no depotkit_downloads_in_flight' : undefined;
    },
  },
  { kind: 'healthz', path: '/healthz', headers: {}, check: (r) => (r.status === 200 && r.body!.toString().includes('ok') ? undefined : `status ${r.status}`) },
  {
    kind: 'ca',
    path: '/ca.pem',
    headers: {},
    check: (r) => (r.status === 200 && r.body!.toString().trim() === caPem.trim() ? undefined : `status ${r.status}, not the CA certificate`),
  },
];

/** One round of every page, each on a new connection (so each round also checks the certificate served). */
async function pagesLoop(): Promise<void> {
  while (running()) {
    const started = Date.now();
    for (const p of pages) {
      const r = await send(p.kind, { method: 'GET', path: p.path, agent: false, headers: p.headers, keepBody: true });
      const reason = r.error ?? p.check(r);
      if (reason) failed(p.kind, p.path, r, reason);
      else tally(p.kind).ok++;
    }
    await sleep(Math.max(0, PAGES_MS - (Date.now() - started)));
  }
}

// /healthz latency, as a client sees it: the proxy of the event-loop delay when none is preloaded.
const probeWindow: Record<'keepAlive' | 'newConnection', number[]> = { keepAlive: [], newConnection: [] };
const probeAll: Record<'keepAlive' | 'newConnection', number[]> = { keepAlive: [], newConnection: [] };
async function probeLoop(which: 'keepAlive' | 'newConnection'): Promise<void> {
  const agent = which === 'keepAlive' ? newAgent() : false;
  while (running()) {
    const r = await send(`probe-${which}`, { method: 'GET', path: '/healthz', agent, keepBody: true, timeoutMs: 10_000 });
    if (r.error || r.status !== 200) failed(`probe-${which}`, '/healthz', r, r.error ?? `status ${r.status}`);
    else {
      tally(`probe-${which}`).ok++;
      probeWindow[which].push(r.endedAt - r.startedAt);
      probeAll[which].push(r.endedAt - r.startedAt);
    }
    await sleep(500);
  }
}

// ---- what happens to the server -------------------------------------------------------------------------

let controlBusy = false;

/** SIGHUP, after a rotation every ROTATE_EVERY_TICKS ticks; waits for serve to say the reload is done. */
async function control(): Promise<void> {
  if (controlBusy) {
    reloads.push({ at: Date.now(), outcome: 'skipped: the previous reload is not done' });
    return;
  }
  controlBusy = true;
  try {
    // Ticks counted by the clock: one skipped (the previous reload still running) does not shift the rotations.
    const tick = Math.round((Date.now() - t0) / RELOAD_MS);
    const rotation = tick % ROTATE_EVERY_TICKS === 0 ? await rotateCertificate() : undefined;
    const at = Date.now();
    const said = nextLine(/Reloaded the certificate|reload failed/, 20_000);
    sighups.push(at);
    process.kill(primary, 'SIGHUP');
    const line = await said;
    const outcome = line === undefined ? 'no answer in 20 s' : /reload failed/.test(line) ? line : 'ok';
    reloads.push({ at, rotation, ms: Date.now() - at, outcome });
    if (outcome !== 'ok') log(`reload at ${since(at)} s: ${outcome}`);
    if (rotation !== undefined && outcome === 'ok') expected = { generation: rotation, since: Date.now() };
  } catch (err) {
    reloads.push({ at: Date.now(), outcome: `error: ${(err as Error).message}` });
    log(`control: ${(err as Error).message}`);
  } finally {
    controlBusy = false;
  }
}

async function killWorker(): Promise<void> {
  const before = childrenOf(primary);
  if (before.length === 0) {
    log('no worker to kill');
    return;
  }
  const pid = pick(before);
  const kill: (typeof kills)[number] = { at: Date.now(), pid };
  kills.push(kill);
  process.kill(pid, 'SIGKILL');
  while (Date.now() - kill.at < 30_000) {
    const now = childrenOf(primary).filter((p) => !before.includes(p));
    if (now.length > 0) {
      kill.replacedByPid = now[0];
      kill.replacedAfterMs = Date.now() - kill.at;
      break;
    }
    await sleep(50);
  }
  log(
    `killed worker ${pid} at ${since(kill.at)} s; ${kill.replacedByPid ? `replaced by ${kill.replacedByPid} after ${kill.replacedAfterMs} ms` : 'not replaced in 30 s'}`,
  );
}

// ---- samples --------------------------------------------------------------------------------------------

interface Sample {
  /** ms since the load started. */
  t: number;
  primary?: ProcessSample;
  workers: ProcessSample[];
  totalFds: number;
  totalRssKiB: number;
  /** Event-loop delay of each process in the last interval (ms beyond the monitor's resolution) and its V8 memory, from the preloaded monitor. */
  eld: MonitorLine[];
  healthz: { keepAlive: { p50: number; p99: number; max: number; n: number }; newConnection: { p50: number; p99: number; max: number; n: number } };
  downloadsInFlight: { server?: number; client: number };
  /** The soak's own event-loop delay (ms beyond the sampling resolution): a busy client adds to every latency it measures. */
  clientEld: { max: number; p99: number };
  loadavg: number;
  requests: number;
}
const samples: Sample[] = [];
/** V8's heap of each serve process right after a full garbage collection (--gc-every), under load. */
const gcSamples: { t: number; pid: number; role: string; heapUsedMiB: number; arrayBuffersMiB: number }[] = [];
const clientEld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
clientEld.enable();

interface MonitorLine {
  pid: number;
  max: number;
  p99: number;
  mean: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  gc?: boolean;
  t: number;
}

/** The monitor lines of a serve process, oldest first. */
function monitorLines(pid: number): MonitorLine[] {
  try {
    const beyond = (v: number) => Math.max(0, v - ELD_RESOLUTION_MS);
    return readFileSync(join(eldDir, `eld-${pid}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as Omit<MonitorLine, 'pid'>)
      .map((l) => ({ ...l, pid, max: beyond(l.max), p99: beyond(l.p99), mean: beyond(l.mean) }));
  } catch {
    return [];
  }
}

/** The last line of a serve process's monitor; undefined when there is none yet, or it is old (the process is gone). */
function monitorLine(pid: number): MonitorLine | undefined {
  const last = monitorLines(pid).at(-1);
  return last && Date.now() - last.t <= 2 * SAMPLE_MS ? last : undefined;
}

/** Each serve process at rest after a full garbage collection: descriptors, RSS and V8's memory. */
async function atRest(): Promise<{ pid: number; role: string; proc?: ProcessSample; heap?: MonitorLine }[]> {
  const pids = [primary, ...childrenOf(primary)];
  const asked = Date.now();
  // Only processes whose monitor has run: a worker forked a moment ago would be ended by the signal.
  if (!args['no-eld']) for (const pid of pids) if (monitorLines(pid).length > 0) process.kill(pid, 'SIGUSR2');
  await sleep(2_000);
  return pids.map((pid) => {
    const heap = monitorLines(pid).findLast((l) => l.gc && l.t >= asked);
    return { pid, role: pid === primary ? 'primary' : 'worker', proc: sampleProcess(pid), heap };
  });
}

function takeSample(): Sample {
  const p = sampleProcess(primary);
  const workers = childrenOf(primary)
    .map(sampleProcess)
    .filter((s): s is ProcessSample => s !== undefined);
  const all = [...(p ? [p] : []), ...workers];
  const stats = (xs: number[]) => ({ p50: median(xs), p99: percentile(xs, 99), max: xs.length ? Math.max(...xs) : NaN, n: xs.length });
  const sample: Sample = {
    t: Date.now() - t0,
    primary: p,
    workers,
    totalFds: all.reduce((s, x) => s + x.fds, 0),
    totalRssKiB: all.reduce((s, x) => s + x.rssKiB, 0),
    eld: all.map((x) => monitorLine(x.pid)).filter((x): x is MonitorLine => x !== undefined),
    healthz: { keepAlive: stats(probeWindow.keepAlive), newConnection: stats(probeWindow.newConnection) },
    downloadsInFlight: { server: lastMetrics.inFlight, client: clientInFlight },
    clientEld: { max: Math.max(0, clientEld.max / 1e6 - ELD_RESOLUTION_MS), p99: Math.max(0, clientEld.percentile(99) / 1e6 - ELD_RESOLUTION_MS) },
    loadavg: loadavg()[0]!,
    requests: [...tallies.values()].reduce((s, t) => s + t.ok + t.failed + t.failedInKill, 0),
  };
  probeWindow.keepAlive = [];
  probeWindow.newConnection = [];
  clientEld.reset();
  return sample;
}

function progress(s: Sample): void {
  const d = tally('download');
  const mib = (kib: number) => (kib / 1024).toFixed(0);
  const eldMax = s.eld.length ? Math.max(...s.eld.map((e) => e.max)).toFixed(0) : '-';
  log(
    `min ${(s.t / 60_000).toFixed(1)}: ${s.requests} requests, ${d.ok} downloads (${(d.bytes / 2 ** 30).toFixed(1)} GiB), wrong bytes ${wrongBytes}, ` +
      `failed ${[...tallies.values()].reduce((a, t) => a + t.failed, 0)} (+${[...tallies.values()].reduce((a, t) => a + t.failedInKill, 0)} in kills); ` +
      `fds ${[s.primary?.fds, ...s.workers.map((w) => w.fds)].join('/')}, RSS ${[s.primary?.rssKiB ?? 0, ...s.workers.map((w) => w.rssKiB)].map(mib).join('/')} MiB; ` +
      `loop delay max ${eldMax} ms; healthz p99 ${s.healthz.keepAlive.p99.toFixed(0)} ms (new connection ${s.healthz.newConnection.p99.toFixed(0)} ms); load ${s.loadavg.toFixed(1)}`,
  );
}

// ---- the run --------------------------------------------------------------------------------------------

await sleep(1_000);
const idleBefore = await atRest();
log(
  `${MINUTES} min of load: ${num('downloads')} download, ${num('ranges')} range, ${num('aborts')} abort, ${num('heads')} HEAD loops, ` +
    `${BAD_AUTH_RATE} wrong passwords/s from ${BAD_AUTH_ADDRESS}; SIGHUP every ${RELOAD_MS / 1000} s, a new certificate every ${ROTATE_EVERY_TICKS} of them, ` +
    `a worker killed every ${KILL_MS / 1000} s; ${binaries.length} binaries, ${(depotBytes / 2 ** 30).toFixed(2)} GiB`,
);
const stopEarly = () => {
  log('interrupted: stopping the load now');
  loadOver = true;
};
process.once('SIGINT', stopEarly);
// Whatever happens, the script ends: the load has its deadline, the drain and the stop below are bounded too.
setTimeout(
  () => {
    log('the run overran its deadline by 5 minutes: giving up');
    serve.kill('SIGKILL');
    process.exit(2);
  },
  deadline - Date.now() + 5 * 60_000,
).unref();

const times = (n: number, f: () => Promise<void>) => Array.from({ length: n }, f);
const loops = [
  ...times(num('downloads'), downloadLoop),
  ...times(num('ranges'), rangeLoop),
  ...times(num('aborts'), abortLoop),
  ...times(num('heads'), headLoop),
  badAuthLoop(),
  pagesLoop(),
  probeLoop('keepAlive'),
  probeLoop('newConnection'),
];
const timers: NodeJS.Timeout[] = [];
const controlTimer = setInterval(() => void control(), RELOAD_MS);
timers.push(controlTimer);
const kills$: Promise<void>[] = [];
timers.push(
  setTimeout(() => {
    kills$.push(killWorker());
    timers.push(setInterval(() => running() && kills$.push(killWorker()), KILL_MS));
  }, KILL_MS + KILL_PHASE_MS),
);
let lastProgress = 0;
const sampler = setInterval(() => {
  const s = takeSample();
  samples.push(s);
  if (s.t - lastProgress >= 60_000 - SAMPLE_MS / 2) {
    lastProgress = s.t;
    progress(s);
  }
}, SAMPLE_MS);
timers.push(sampler);
if (GC_MS > 0 && !args['no-eld']) {
  const collect = () =>
    void atRest().then((xs) => {
      for (const x of xs)
        if (x.heap) gcSamples.push({ t: x.heap.t - t0, pid: x.pid, role: x.role, heapUsedMiB: x.heap.heapUsedMiB, arrayBuffersMiB: x.heap.arrayBuffersMiB });
    });
  // Half a period off the kills and rotations, which fall on whole periods.
  timers.push(
    setTimeout(() => {
      collect();
      timers.push(setInterval(() => running() && collect(), GC_MS));
    }, GC_MS / 2),
  );
}

while (running()) await sleep(250);
loadOver = true;
for (const t of timers) clearInterval(t);
log('load over: waiting for the requests in flight (at most 90 s)');
await Promise.race([Promise.all([...loops, ...kills$]), sleep(90_000)]);
while (controlBusy) await sleep(100);
for (const a of agents) a.destroy();

// At rest: the server's keep-alive timeout (5 s) has closed every connection, nothing is downloading.
await sleep(7_000);
const idleAfter = await atRest();
const finalMetrics = await exchange(endpoint, {
  method: 'GET',
  path: '/metrics',
  agent: false,
  headers: { authorization: good },
  keepBody: true,
  timeoutMs: 10_000,
});
const inFlightAtRest = finalMetrics.body ? metricValue(finalMetrics.body.toString(), 'depotkit_downloads_in_flight') : undefined;

// Stopped as a service manager would: SIGTERM, downloads have --grace (5 s) to finish.
const pids = [primary, ...childrenOf(primary)];
stopping = true;
const stopAt = Date.now();
if (serveExit === undefined) {
  serve.kill('SIGTERM');
  const exited = new Promise<void>((r) => serve.once('exit', () => r()));
  await Promise.race([exited, sleep(20_000)]);
}
const stoppedAfterMs = serveExit ? serveExit.at - stopAt : undefined;
await sleep(500);
const leftOver = pids.filter(isAlive);
for (const pid of leftOver) process.kill(pid, 'SIGKILL');
process.removeListener('SIGINT', stopEarly);

// ---- summary --------------------------------------------------------------------------------------------

const loadMs = Math.min(Date.now(), deadline) - t0;
const series = (f: (s: Sample) => number | undefined) => samples.filter((s) => f(s) !== undefined).map((s) => ({ t: s.t, v: f(s)! }));
const fdGrowth = {
  primary: growth(
    series((s) => s.primary?.fds),
    GROWTH_FROM_MS,
  ),
  total: growth(
    series((s) => s.totalFds),
    GROWTH_FROM_MS,
  ),
};
const heapGrowth = {
  primaryMiB: growth(
    samples.map((s) => ({ t: s.t, v: s.eld.find((e) => e.pid === s.primary?.pid)?.heapUsedMiB ?? NaN })),
    GROWTH_FROM_MS,
  ),
  primaryAfterGcMiB: growth(
    gcSamples.filter((g) => g.role === 'primary').map((g) => ({ t: g.t, v: g.heapUsedMiB })),
    GROWTH_FROM_MS,
  ),
};
const rssGrowth = {
  primaryKiB: growth(
    series((s) => s.primary?.rssKiB),
    GROWTH_FROM_MS,
  ),
  totalKiB: growth(
    series((s) => s.totalRssKiB),
    GROWTH_FROM_MS,
  ),
};
const eldAll = samples.flatMap((s) => s.eld);
const failedOutside = [...tallies.values()].reduce((a, t) => a + t.failed, 0);
const failedInKills = [...tallies.values()].reduce((a, t) => a + t.failedInKill, 0);
const reloadMs = reloads.filter((r) => r.outcome === 'ok').map((r) => r.ms!);
const cleanStop = serveExit !== undefined && serveExit.code === 0 && leftOver.length === 0;
const earlyExit = serveExit !== undefined && serveExit.at < stopAt;
const summary = {
  minutes: loadMs / 60_000,
  requests: Object.fromEntries([...tallies].sort()),
  statuses: Object.fromEntries([...statusCounts].sort()),
  gibDownloaded: [...tallies.values()].reduce((a, t) => a + t.bytes, 0) / 2 ** 30,
  wrongBytes,
  failedOutsideKills: failedOutside,
  failedInKills,
  staleCertificates: staleCertificates.length,
  /** Per rotation after whose reload an older certificate was still served: how many connections got one, and for how long. */
  staleEpisodes: [...new Set(staleCertificates.map((c) => c.expected))].map((gen) => {
    const of = staleCertificates.filter((c) => c.expected === gen);
    return {
      generation: gen,
      connections: of.length,
      firstAtS: (of[0]!.at - t0) / 1000,
      lastAtS: (of.at(-1)!.at - t0) / 1000,
      msSinceKill: of[0]!.msSinceKill,
    };
  }),
  unknownCertificates: unknownCertificates.length,
  certificateGenerationsSeen: Object.fromEntries(certsSeen),
  reloads: {
    ticks: reloads.length,
    ok: reloadMs.length,
    skipped: reloads.filter((r) => r.outcome.startsWith('skipped')).length,
    notOk: reloads.filter((r) => r.outcome !== 'ok' && !r.outcome.startsWith('skipped')).map((r) => ({ atS: (r.at - t0) / 1000, outcome: r.outcome })),
    rotations: generation,
    msMedian: median(reloadMs),
    msMax: reloadMs.length ? Math.max(...reloadMs) : NaN,
  },
  kills: {
    count: kills.length,
    replaced: kills.filter((k) => k.replacedByPid !== undefined).length,
    replacedAfterMsMedian: median(kills.flatMap((k) => (k.replacedAfterMs === undefined ? [] : [k.replacedAfterMs]))),
  },
  fds: fdGrowth,
  rss: rssGrowth,
  heapUsed: heapGrowth,
  atRest: {
    before: idleBefore,
    after: idleAfter,
    downloadsInFlightAfter: inFlightAtRest,
  },
  eventLoopDelayMs: eldAll.length
    ? { max: Math.max(...eldAll.map((e) => e.max)), p99Median: median(eldAll.map((e) => e.p99)), p99Max: Math.max(...eldAll.map((e) => e.p99)) }
    : 'not measured (--no-eld)',
  clientEventLoopDelayMs: { max: Math.max(0, ...samples.map((x) => x.clientEld.max)), p99Median: median(samples.map((x) => x.clientEld.p99)) },
  healthzMs: {
    keepAlive: { p50: median(probeAll.keepAlive), p99: percentile(probeAll.keepAlive, 99), max: Math.max(...probeAll.keepAlive) },
    newConnection: { p50: median(probeAll.newConnection), p99: percentile(probeAll.newConnection, 99), max: Math.max(...probeAll.newConnection) },
  },
  serve: { exit: serveExit, exitedBeforeTheEnd: earlyExit, stoppedAfterMs, leftOverProcesses: leftOver },
  wrongByteEvents,
};
const machine = {
  cpus: cpus().length,
  cpu: cpus()[0]?.model,
  memoryGiB: totalmem() / 2 ** 30,
  kernel: release(),
  node: process.version,
};
writeFileSync(
  outFile,
  `${JSON.stringify(
    {
      started: new Date(t0).toISOString(),
      cli: cliSource,
      machine,
      options: args,
      summary,
      samples,
      gcSamples,
      failures,
      kills,
      reloads,
      staleCertificates,
      unknownCertificates,
      serveLog,
    },
    null,
    1,
  )}\n`,
);

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const line = (name: string, g: Growth, scale = 1, unit = '') =>
  `  ${name}: ${f1(g.first / scale)}${unit} -> ${f1(g.last / scale)}${unit} (median of the first and last minute), slope ${f1(g.perMinute / scale)}${unit}/min over ${g.samples} samples`;
console.log(`\nSoak of depotkit serve: ${f1(summary.minutes)} min, ${WORKERS} processes, ${cliSource}; ${machine.cpus} x ${machine.cpu}, ${machine.node}`);
console.log('requests (ok / failed in kills / failed otherwise, GiB):');
for (const [kind, t] of [...tallies].sort())
  console.log(`  ${kind.padEnd(22)} ${t.ok} / ${t.failedInKill} / ${t.failed}${t.bytes > MiB ? `, ${(t.bytes / 2 ** 30).toFixed(1)}` : ''}`);
console.log(`wrong-password answers: ${statusCounts.get('bad-auth 401') ?? 0} x 401, ${statusCounts.get('bad-auth 429') ?? 0} x 429`);
console.log(`wrong bytes: ${wrongBytes} (goal 0); failed requests outside kills: ${failedOutside} (goal 0), in kills: ${failedInKills}`);
console.log(
  `certificates: ${generation} rotations, stale served ${staleCertificates.length} times after ${summary.staleEpisodes.length} of them, unknown ${unknownCertificates.length}; reloads ${reloadMs.length} ok (median ${f1(summary.reloads.msMedian)} ms), ${summary.reloads.notOk.length} not, ${summary.reloads.skipped} ticks skipped while one ran`,
);
console.log(`kills: ${kills.length}, replaced ${summary.kills.replaced} (median ${f1(summary.kills.replacedAfterMsMedian)} ms)`);
console.log(`growth from minute ${GROWTH_FROM_MS / 60_000}:`);
console.log(line('fds, primary', fdGrowth.primary));
console.log(line('fds, all processes', fdGrowth.total));
console.log(line('RSS, primary', rssGrowth.primaryKiB, 1024, ' MiB'));
console.log(line('RSS, all processes', rssGrowth.totalKiB, 1024, ' MiB'));
console.log(line('V8 heap used, primary', heapGrowth.primaryMiB, 1, ' MiB'));
console.log(line('V8 heap used after a full GC, primary', heapGrowth.primaryAfterGcMiB, 1, ' MiB'));
const rest = (xs: Awaited<ReturnType<typeof atRest>>) =>
  xs
    .map(
      (x) =>
        `${x.role} ${x.proc?.fds ?? '-'} fds, RSS ${f1((x.proc?.rssKiB ?? NaN) / 1024)} MiB` +
        (x.heap ? `, heap used ${f1(x.heap.heapUsedMiB)} MiB, external ${f1(x.heap.externalMiB)} MiB` : ''),
    )
    .join('; ');
console.log(`at rest after a full GC: before the load ${rest(idleBefore)}`);
console.log(`                          after the load ${rest(idleAfter)}; downloads in flight: ${inFlightAtRest}`);
console.log(
  typeof summary.eventLoopDelayMs === 'string'
    ? `event-loop delay: ${summary.eventLoopDelayMs}`
    : `event-loop delay (beyond ${ELD_RESOLUTION_MS} ms sampling): max ${f1(summary.eventLoopDelayMs.max)} ms, p99 per 10 s median ${f1(summary.eventLoopDelayMs.p99Median)} ms, worst ${f1(summary.eventLoopDelayMs.p99Max)} ms`,
);
console.log(
  `the soak's own event-loop delay: max ${f1(summary.clientEventLoopDelayMs.max)} ms, p99 per 10 s median ${f1(summary.clientEventLoopDelayMs.p99Median)} ms (it adds to the latencies below)`,
);
const hz = summary.healthzMs;
console.log(
  `healthz latency: keep-alive p50 ${f1(hz.keepAlive.p50)} / p99 ${f1(hz.keepAlive.p99)} / max ${f1(hz.keepAlive.max)} ms; new connection p50 ${f1(hz.newConnection.p50)} / p99 ${f1(hz.newConnection.p99)} / max ${f1(hz.newConnection.max)} ms`,
);
console.log(
  `serve: ${earlyExit ? 'EXITED BEFORE THE END' : `stopped ${f1((stoppedAfterMs ?? NaN) / 1000)} s after SIGTERM`}, exit ${serveExit?.signal ?? serveExit?.code}, left over: ${leftOver.join(', ') || 'none'}`,
);
console.log(`samples and details: ${outFile}`);

for (const b of binaries) closeSync(b.fd);
if (!args.work) rmSync(work, { recursive: true, force: true });
const ok =
  summary.reloads.notOk.length === 0 &&
  wrongBytes === 0 &&
  failedOutside === 0 &&
  staleCertificates.length === 0 &&
  unknownCertificates.length === 0 &&
  cleanStop &&
  !earlyExit;
process.exit(ok ? 0 : 1);
