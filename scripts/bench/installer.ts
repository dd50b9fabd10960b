// Benchmark: a fleet of simulated installers on loopback (all in this process,
// each on its own port), pointed at one demo depot over HTTPS with Basic auth.
// depotkit `installer connect-depot --trust-ca --no-sync` (trust + depot push, concurrency 16),
// then its idempotent re-run, against the field's way: curl per installer
// (token, import, depot PUT), 16 installers at a time. Usage:
//   npx tsx scripts/bench/installer.ts [installers, default 200] [concurrency, default 16]
// (run `npm run build` first: the CLI under test is dist/cli/main.js)
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { limiter } from '../../src/util/limit.js';
import { INSTALLER_API, TRUSTED_FOR_OUTBOUND } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, selfSignedServerCertificate } from '../../src/cert/index.js';
import { startDepotServer } from '../../src/server/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';

const run = promisify(execFile);
const count = Number(process.argv[2] ?? 200);
const concurrency = Number(process.argv[3] ?? 16);
const cli = join(import.meta.dirname, '../../dist/cli/main.js');
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-installer-'));
const USER = 'admin@local';
const PASSWORD = 'Bench-Installer-1!';
const DEPOT_USER = 'depot';
const DEPOT_PASSWORD = 'Bench-Depot-1!';

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

// One depot, one CA.
await makeDemoDepot(join(work, 'depot'), { binarySize: 1024, signingDir: join(work, 'signing') });
const ca = await createCa({ keySize: 2048 });
const depotCert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
const depot = await startDepotServer({
  root: join(work, 'depot'),
  tls: { certPem: depotCert.certPem, keyPem: depotCert.keyPem },
  auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
});
const files = {
  ca: join(work, 'depot-ca.pem'),
  installerCa: join(work, 'installer.pem'),
  password: join(work, 'password'),
  depotPassword: join(work, 'depot-password'),
  tokenRequest: join(work, 'token.json'),
  importRequest: join(work, 'import.json'),
  depotRequest: join(work, 'depot.json'),
};
writeFileSync(files.ca, ca.certPem);
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

// The fleets share one self-signed certificate: 2 × `count` key generations would dominate the set-up.
const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729);
writeFileSync(files.installerCa, tls.certPem);
async function fleet(): Promise<InstallerSimulator[]> {
  const sims: InstallerSimulator[] = [];
  for (let i = 0; i < count; i++) sims.push(await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls }));
  return sims;
}

// ---------------------------------------------------------------- depotkit
const ours = await fleet();
const inventory = join(work, 'fleet.yaml');
writeFileSync(
  inventory,
  [
    'defaults:',
    `  user: ${USER}`,
    '  passwordFile: password',
    '  installerCa: installer.pem',
    'installers:',
    ...ours.map((s, i) => `  - { name: installer-${i}, url: "${s.url}" }`),
  ].join('\n'),
);
const depotkitArgs = [
  cli,
  'installer',
  'depot',
  '--inventory',
  inventory,
  '--concurrency',
  String(concurrency),
  '--trust-ca',
  files.ca,
  '--depot-host',
  'localhost',
  '--depot-port',
  String(depot.port),
  '--depot-user',
  DEPOT_USER,
  '--depot-password-file',
  files.depotPassword,
  // What curl does: the CA and the depot; the sync is measured by fleet-scale.ts (push-sync).
  '--no-sync',
  '--json',
];

async function depotkit(expectAction: string): Promise<number> {
  const start = process.hrtime.bigint();
  const { stdout } = await run(process.execPath, depotkitArgs, { maxBuffer: 64 << 20 });
  const elapsed = seconds(start);
  const rows = JSON.parse(stdout) as { ok: boolean; installers: Array<{ ok: boolean; result?: { action: string } }> };
  const wrong = rows.installers.filter((r) => !r.ok || r.result?.action !== expectAction);
  if (!rows.ok || wrong.length > 0) throw new Error(`depotkit: ${wrong.length} rows not ${expectAction}`);
  return elapsed;
}
const first = await depotkit('updated');
const rerun = await depotkit('unchanged');
const requestsPerInstaller = ours[0]!.logs.filter((l) => / \/v1\/[^ ]+ \d{3}$/.test(l)).length;

// ---------------------------------------------------------------- curl
const theirs = await fleet();
const curl = (args: string[]) => run('curl', ['-sS', '--cacert', files.installerCa, '-H', 'content-type: application/json', ...args], { maxBuffer: 1 << 20 });

async function curlFleet(): Promise<{ seconds: number; statuses: Record<string, number> }> {
  const limit = limiter(concurrency);
  const statuses: Record<string, number> = {};
  const start = process.hrtime.bigint();
  await Promise.all(
    theirs.map((sim) =>
      limit(async () => {
        const token = (
          JSON.parse((await curl(['--data-binary', `@${files.tokenRequest}`, `${sim.url}${INSTALLER_API.tokens}`])).stdout) as { accessToken: string }
        ).accessToken;
        const auth = ['-H', `authorization: Bearer ${token}`, '-o', '/dev/null', '-w', '%{http_code}'];
        const imported = (await curl([...auth, '--data-binary', `@${files.importRequest}`, `${sim.url}${INSTALLER_API.trustedCertificates}`])).stdout;
        const pushed = (await curl([...auth, '-X', 'PUT', '--data-binary', `@${files.depotRequest}`, `${sim.url}${INSTALLER_API.depotSettings}`])).stdout;
        for (const key of [`import ${imported}`, `depot ${pushed}`]) statuses[key] = (statuses[key] ?? 0) + 1;
      }),
    ),
  );
  return { seconds: seconds(start), statuses };
}
const curlFirst = await curlFleet();
const curlRerun = await curlFleet();

for (const sim of [...ours, ...theirs]) await sim.close();
await depot.close();
rmSync(work, { recursive: true, force: true });

const rows: Array<[string, number, number]> = [
  [`trust + depot push, ${count} installers, concurrency ${concurrency}`, first, curlFirst.seconds],
  ['re-run (depotkit: nothing to do; curl: 409 + PUT again)', rerun, curlRerun.seconds],
];
console.log(`| measurement | depotkit (s) | curl (s) | ratio (curl/depotkit) |`);
console.log(`|---|---|---|---|`);
for (const [name, a, b] of rows) console.log(`| ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)} |`);
console.log(`depotkit requests per installer, first run + re-run: ${requestsPerInstaller}`);
console.log(`curl statuses, first run: ${JSON.stringify(curlFirst.statuses)}; re-run: ${JSON.stringify(curlRerun.statuses)}`);
