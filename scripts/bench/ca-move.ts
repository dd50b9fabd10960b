// Benchmark: moving a served depot to another CA over a fleet of simulated consumers
// (installers and SDDC Managers on 9.0.2, 9.1.0 and 9.1.1, all in this process, each on
// its own port), with a real `depotkit serve` (its own process, two workers) reloaded by
// SIGHUP. `depotkit depot move-ca` (the built CLI) against the hand-made curl sequence that
// does the same: per consumer a token, the new CA imported, the list read to check it; the
// new pair copied over the served files and serve sent SIGHUP; then each consumer validates
// the depot (PUT of the depot settings). Rounds alternate which goes first; each move goes
// to a fresh CA. Through every move a validator has consumers validate the depot every
// 200 ms, as the test does, and counts the failures. Usage:
//   npx tsx scripts/bench/ca-move.ts [consumers, default 200] [rounds, default 3] [concurrency, default the CLI's]
//   WAYS=depotkit (or curl): only that way, to explore
//   PROFILE_DIR=dir: a CPU profile of each depotkit run there (node --cpu-prof)
//   VALIDATORS=n: validation loops, each going round its share of the consumers (default 20, the
//   test's fleet; VALIDATORS=<consumers> has every consumer validate every 200 ms)
// (run `npm run build` first: the CLI under test is dist/cli/main.js)
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { limiter } from '../../src/util/limit.js';
import { INSTALLER_API, TRUSTED_FOR_OUTBOUND } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { INSTALLER_DEFAULTS } from '../../src/installer/defaults.js';
import { InstallerClient, ensureTrusted, pushDepot } from '../../src/installer/index.js';
import { createCa, issueServerCert, selfSignedServerCertificate } from '../../src/cert/index.js';
import type { CaMoveReport } from '../../src/procedures/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';

const run = promisify(execFile);
const count = Number(process.argv[2] ?? 200);
const rounds = Number(process.argv[3] ?? 3);
const concurrency = Number(process.argv[4] ?? INSTALLER_DEFAULTS.concurrency);
const validators = Math.min(count, Number(process.env.VALIDATORS ?? 20));
const cli = join(import.meta.dirname, '../../dist/cli/main.js');
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-ca-move-'));
const USER = 'admin@local';
const PASSWORD = 'Bench-Consumer-1!';
const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'Bench-Depot-1!';
const VERSIONS = ['9.0.2.0.24920000', '9.1.0.0.25000000', '9.1.1.0.25100000'];
const CLK_TCK = Number((await run('getconf', ['CLK_TCK'])).stdout.trim());

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds of this process (the consumers and the validator) and of its waited-for children (the mover). */
function cpu(): { self: number; children: number } {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const at = (n: number) => Number(fields[n - 3]);
  return { self: (at(14) + at(15)) / CLK_TCK, children: (at(16) + at(17)) / CLK_TCK };
}

// ---------------------------------------------------------------- the depot, served on the first CA
const files = {
  servedCert: join(work, 'served-cert.pem'),
  servedKey: join(work, 'served-key.pem'),
  consumerCa: join(work, 'consumer-ca.pem'),
  password: join(work, 'password'),
  depotPassword: join(work, 'depot-password'),
  tokenRequest: join(work, 'token.json'),
  depotRequest: join(work, 'depot.json'),
  inventory: join(work, 'consumers.yaml'),
};
const names = { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 as const };
const firstCa = await createCa({ cn: 'Depot CA 0', keySize: 2048 });
const firstLeaf = await issueServerCert(firstCa, names);
writeFileSync(files.servedCert, firstLeaf.certPem);
writeFileSync(files.servedKey, firstLeaf.keyPem, { mode: 0o600 });
writeFileSync(files.password, `${PASSWORD}\n`, { mode: 0o600 });
writeFileSync(files.depotPassword, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
writeFileSync(files.tokenRequest, JSON.stringify({ username: USER, password: PASSWORD }), { mode: 0o600 });
await makeDemoDepot(join(work, 'depot'), { binarySize: 1024, signingDir: join(work, 'signing') });

const serve = spawn(
  process.execPath,
  [cli, 'serve', join(work, 'depot'), '--host', '127.0.0.1', '--port', '0', '--cert', files.servedCert, '--key', files.servedKey].concat([
    '--user',
    DEPOT_USER,
    '--password-file',
    files.depotPassword,
    '--workers',
    '2',
    '--json',
  ]),
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const served = await new Promise<{ port: number; pid: number }>((resolve, reject) => {
  let out = '';
  serve.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    try {
      resolve(JSON.parse(out) as { port: number; pid: number });
    } catch {
      // Not the whole JSON yet.
    }
  });
  serve.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
});
// Interrupted: serve goes too.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    serve.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
const depotUrl = `https://127.0.0.1:${served.port}`;
const depotSpec = { url: depotUrl, username: DEPOT_USER, password: DEPOT_PASSWORD };
writeFileSync(
  files.depotRequest,
  JSON.stringify({
    offlineAccount: { username: DEPOT_USER, password: DEPOT_PASSWORD },
    depotConfiguration: { isOfflineDepot: true, hostname: '127.0.0.1', port: served.port },
  }),
  { mode: 0o600 },
);

// ---------------------------------------------------------------- the consumers, trusting the first CA
// They share one self-signed certificate: `count` key generations would dominate the set-up.
const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729);
writeFileSync(files.consumerCa, tls.certPem);
const sims: InstallerSimulator[] = [];
for (let i = 0; i < count; i++) {
  const role = i % 4 === 3 ? 'sddc-manager' : 'installer';
  sims.push(await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls, version: VERSIONS[i % VERSIONS.length], role }));
}
writeFileSync(
  files.inventory,
  [
    'defaults:',
    `  user: ${USER}`,
    '  passwordFile: password',
    '  installerCa: consumer-ca.pem',
    'consumers:',
    ...sims.map((s, i) => `  - { name: consumer-${i}, url: "${s.url}", role: ${i % 4 === 3 ? 'sddc-manager' : 'installer'} }`),
  ].join('\n'),
);
const connect = (sim: InstallerSimulator) => InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [tls.certPem] } });
const setUp = limiter(16);
await Promise.all(
  sims.map((sim) =>
    setUp(async () => {
      const client = await connect(sim);
      try {
        await ensureTrusted(client, [firstCa.certPem]);
        if (!(await pushDepot(client, depotSpec)).ok) throw new Error(`${sim.url} refused the depot before the moves`);
      } finally {
        await client.close();
      }
    }),
  ),
);

// ---------------------------------------------------------------- the validator
interface Tally {
  ok: number;
  failed: number;
  errors: number;
  first?: string;
  firstError?: string;
}

/** `validators` loops, each going round its share of the consumers: validate one, wait 200 ms, the next. */
async function validateUntil(stop: Promise<unknown>, tally: Tally): Promise<void> {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  await Promise.all(
    Array.from({ length: validators }, async (_, v) => {
      const mine = sims.filter((_, i) => i % validators === v);
      const clients = await Promise.all(mine.map(connect));
      try {
        for (let k = 0; !stopped; k++) {
          // A validator's own connection error (an idle connection the consumer closed) is not the depot's: counted apart.
          const push = await pushDepot(clients[k % clients.length]!, depotSpec, { force: true }).catch((err: Error) => {
            tally.firstError ??= err.message;
            return undefined;
          });
          if (!push) tally.errors++;
          else if (push.ok) tally.ok++;
          else {
            tally.failed++;
            tally.first ??= `${mine[k % mine.length]!.url}: ${push.errorCode} ${push.message}`;
          }
          await sleep(200);
        }
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    }),
  );
}

// ---------------------------------------------------------------- one move each way
interface NewPair {
  n: number;
  caPem: string;
  ca: string;
  cert: string;
  key: string;
}

async function newPair(n: number): Promise<NewPair> {
  const ca = await createCa({ cn: `Depot CA ${n}`, keySize: 2048 });
  const leaf = await issueServerCert(ca, names);
  const pair = { n, caPem: ca.certPem, ca: join(work, `ca-${n}.pem`), cert: join(work, `cert-${n}.pem`), key: join(work, `key-${n}.pem`) };
  writeFileSync(pair.ca, ca.certPem);
  writeFileSync(pair.cert, leaf.certPem);
  writeFileSync(pair.key, leaf.keyPem, { mode: 0o600 });
  return pair;
}

async function depotkit(pair: NewPair): Promise<void> {
  const args = ['depot', 'move-ca', '--cert', pair.cert, '--key', pair.key, '--new-ca', pair.ca, '--served-cert', files.servedCert]
    .concat(['--served-key', files.servedKey, '--serve-pid', String(served.pid), '--depot-url', depotUrl, '--depot-user', DEPOT_USER])
    .concat(['--depot-password-file', files.depotPassword, '--inventory', files.inventory, '--concurrency', String(concurrency)])
    .concat(['--state-file', join(work, `state-${pair.n}.json`), '--json']);
  const profile = process.env.PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROFILE_DIR] : [];
  const { stdout } = await run(process.execPath, [...profile, cli, ...args], { maxBuffer: 256 << 20 }).catch((err: { stdout?: string }) => ({
    stdout: err.stdout ?? '',
  }));
  const report = JSON.parse(stdout) as CaMoveReport;
  const revalidated = report.phases.find((p) => p.phase === 'revalidate')?.rows?.filter((r) => r.ok).length;
  if (!report.ok || revalidated !== count) throw new Error(`depotkit: the move stopped (${report.next}); ${revalidated} consumers revalidated`);
}

const curl = (args: string[]) => run('curl', ['-sS', '--cacert', files.consumerCa, '-H', 'content-type: application/json', ...args], { maxBuffer: 8 << 20 });
const normalise = (pem: string) => pem.replace(/\s+/g, '');

/** The hand-made way: the steps an operator scripts with curl, consumers `concurrency` at a time. */
async function byHand(pair: NewPair): Promise<void> {
  const limit = limiter(concurrency);
  const importRequest = join(work, `import-${pair.n}.json`);
  writeFileSync(importRequest, JSON.stringify({ certificate: pair.caPem, certificateUsageType: TRUSTED_FOR_OUTBOUND }));
  const tokens = await Promise.all(
    sims.map((sim) =>
      limit(async () => {
        const token = (
          JSON.parse((await curl(['--data-binary', `@${files.tokenRequest}`, `${sim.url}${INSTALLER_API.tokens}`])).stdout) as { accessToken: string }
        ).accessToken;
        const auth = ['-H', `authorization: Bearer ${token}`];
        const imported = (
          await curl([...auth, '-o', '/dev/null', '-w', '%{http_code}', '--data-binary', `@${importRequest}`, `${sim.url}${INSTALLER_API.trustedCertificates}`])
        ).stdout;
        if (!['200', '201', '409'].includes(imported)) throw new Error(`curl: ${sim.url} answered ${imported} to the import`);
        const list = JSON.parse((await curl([...auth, `${sim.url}${INSTALLER_API.trustedCertificates}`])).stdout) as {
          elements: Array<{ certificate: string }>;
        };
        if (!list.elements.some((e) => normalise(e.certificate) === normalise(pair.caPem))) throw new Error(`curl: ${sim.url} does not list the new CA`);
        return token;
      }),
    ),
  );
  copyFileSync(pair.cert, files.servedCert);
  copyFileSync(pair.key, files.servedKey);
  await run('kill', ['-HUP', String(served.pid)]);
  // Until the depot answers on a certificate of the new CA (serve's 401 without credentials is an answer).
  for (;;) {
    const ok = await run('curl', ['-sS', '-o', '/dev/null', '--cacert', pair.ca, `${depotUrl}/`]).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await sleep(250);
  }
  const refused = await Promise.all(
    sims.map((sim, i) =>
      limit(async () => {
        const args = [
          '-H',
          `authorization: Bearer ${tokens[i]}`,
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-X',
          'PUT',
          '--data-binary',
          `@${files.depotRequest}`,
        ];
        return (await curl([...args, `${sim.url}${INSTALLER_API.depotSettings}`])).stdout !== '202';
      }),
    ),
  );
  if (refused.some(Boolean)) throw new Error(`curl: ${refused.filter(Boolean).length} consumers refused the depot`);
}

interface Measure {
  wall: number;
  moverCpu: number;
  consumersCpu: number;
  tally: Tally;
}

async function measure(move: (pair: NewPair) => Promise<void>, pair: NewPair): Promise<Measure> {
  const tally: Tally = { ok: 0, failed: 0, errors: 0 };
  let done!: () => void;
  const validating = validateUntil(new Promise<void>((r) => (done = r)), tally);
  await sleep(400);
  const before = cpu();
  const start = process.hrtime.bigint();
  try {
    await move(pair);
  } finally {
    done();
  }
  const wall = seconds(start);
  const after = cpu();
  await validating;
  return { wall, moverCpu: after.children - before.children, consumersCpu: after.self - before.self, tally };
}

// ---------------------------------------------------------------- rounds
const results: Record<'depotkit' | 'curl', Measure[]> = { depotkit: [], curl: [] };
const load = loadavg()[0]!.toFixed(2);
let n = 1;
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (['depotkit', 'curl'] as const) : (['curl', 'depotkit'] as const);
  for (const way of order.filter((w) => (process.env.WAYS ?? 'depotkit,curl').split(',').includes(w))) {
    const m = await measure(way === 'depotkit' ? depotkit : byHand, await newPair(n++));
    results[way].push(m);
    console.error(
      `round ${round + 1} ${way}: ${m.wall.toFixed(2)} s, mover CPU ${m.moverCpu.toFixed(2)} s, validations ${m.tally.ok} ok ${m.tally.failed} failed (validator errors ${m.tally.errors}${m.tally.firstError ? `: ${m.tally.firstError}` : ''})${m.tally.first ? ` (${m.tally.first})` : ''}`,
    );
  }
}

serve.kill('SIGTERM');
await Promise.all(sims.map((s) => s.close()));
rmSync(work, { recursive: true, force: true });

const row = (way: 'depotkit' | 'curl') => {
  const ms = results[way];
  return {
    wall: median(ms.map((m) => m.wall)),
    cpu: median(ms.map((m) => m.moverCpu)),
    consumers: median(ms.map((m) => m.consumersCpu)),
    ok: ms.reduce((s, m) => s + m.tally.ok, 0),
    failed: ms.reduce((s, m) => s + m.tally.failed, 0),
  };
};
console.log(`${count} consumers, concurrency ${concurrency}, ${rounds} rounds, ${validators} validation loops, load average before ${load}`);
console.log('| way | wall (s, median) | mover CPU (s, median) | consumers + validator CPU (s, median) | validations ok | failed |');
console.log('|---|---|---|---|---|---|');
const wayNames = { depotkit: 'depotkit depot move-ca', curl: 'curl by hand' } as const;
for (const way of ['depotkit', 'curl'] as const) {
  if (results[way].length === 0) continue;
  const r = row(way);
  console.log(`| ${wayNames[way]} | ${r.wall.toFixed(2)} | ${r.cpu.toFixed(2)} | ${r.consumers.toFixed(2)} | ${r.ok} | ${r.failed} |`);
}
if (results.depotkit.length > 0 && results.curl.length > 0) {
  const [ours, theirs] = [row('depotkit'), row('curl')];
  console.log(`ratio (curl / depotkit): wall ${(theirs.wall / ours.wall).toFixed(2)}, mover CPU ${(theirs.cpu / ours.cpu).toFixed(2)}`);
}
