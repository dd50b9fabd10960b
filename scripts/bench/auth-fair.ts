// Benchmark: users who know their password, logging in for the first time during a flood of wrong passwords
// from 12 and from 30 loopback addresses (two clients each, a new wrong password as soon as the last is
// answered, Retry-After ignored), beside slowloris connections, on `depotkit serve` with `--htpasswd` (bcrypt
// cost 12) and with `--user`/`--password-file`. A fresh server for every run, so no check is cached when the
// flood starts. Two users send sequential GETs of the catalog, each on a new connection: `depot` (whose password
// the flood guesses) from 127.0.0.1 and `second` from 127.0.201.1 (with `--user`, `depot` from that address too).
// The modes alternate, their order swapped every round. Usage:
//   npx tsx scripts/bench/auth-fair.ts [seconds per run, default 20] [rounds, default 2] [slowloris connections, default 2000]
// (run `npm run build` first: the server under test is dist/cli/main.js)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { DEPOT_PATHS } from '../../src/constants.js';
import { floodWrongPasswords, holdConnections, loopbackAddresses, timedGet, type Target, type Timed } from '../../test/security/flood.js';
import { basic, makePki, spawnServe, tlsServeArgs, writeTree } from '../../test/server/helpers.js';
import { median, percentile } from '../soak/procfs.js';

const seconds = Number(process.argv[2] ?? 20);
const rounds = Number(process.argv[3] ?? 2);
const slowloris = Number(process.argv[4] ?? 2000);
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-auth-fair-'));
const root = await writeTree(join(work, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
writeFileSync(join(work, 'htpasswd'), `depot:${bcrypt.hashSync('right', 12)}\nsecond:${bcrypt.hashSync('other', 12)}\n`);
writeFileSync(join(work, 'password'), 'right\n', { mode: 0o600 });
const pki = await makePki();
writeFileSync(join(work, 'cert.pem'), pki.certPem);
writeFileSync(join(work, 'key.pem'), pki.keyPem, { mode: 0o600 });

type Mode = 'htpasswd' | 'user';
const modeArgs: Record<Mode, string[]> = {
  htpasswd: [...tlsServeArgs(root, work), '--htpasswd', join(work, 'htpasswd')],
  user: tlsServeArgs(root, work, { auth: true }),
};

/** A user's sequential requests until `end`. */
async function user(target: Target, name: string, password: string, from: string, end: number): Promise<Timed[]> {
  const got: Timed[] = [];
  while (performance.now() < end) got.push(await timedGet(target, basic(name, password), from));
  return got;
}

interface Run {
  requests: Timed[];
  firsts: number[];
  flood: Map<number, number>;
  load: [number, number];
}

async function run(mode: Mode, addresses: number): Promise<Run> {
  const before = loadavg()[0]!;
  const serve = await spawnServe(modeArgs[mode]);
  const target = { port: serve.port, ca: pki.caCertPem, path: `/${DEPOT_PATHS.catalog}` };
  const loris = await holdConnections(target, slowloris, '127.0.200.1');
  const flood = floodWrongPasswords(target, 'depot', loopbackAddresses(addresses, addresses), 2);
  // The flood's first seconds: the queue of checks full, every address with its budget still whole.
  await new Promise((r) => setTimeout(r, 2_000));
  const end = performance.now() + seconds * 1000;
  const users = await Promise.all([
    user(target, 'depot', 'right', '127.0.0.1', end),
    mode === 'htpasswd' ? user(target, 'second', 'other', '127.0.201.1', end) : user(target, 'depot', 'right', '127.0.201.1', end),
  ]);
  const answers = await flood.stop();
  loris.close();
  serve.child.kill('SIGTERM');
  await serve.exited;
  return { requests: users.flat(), firsts: users.map((u) => u[0]?.ms ?? NaN), flood: answers, load: [before, loadavg()[0]!] };
}

const results = new Map<string, Run[]>();
for (let round = 0; round < rounds; round++) {
  const modes: Mode[] = round % 2 === 0 ? ['htpasswd', 'user'] : ['user', 'htpasswd'];
  for (const mode of modes) {
    for (const addresses of [12, 30]) {
      const r = await run(mode, addresses);
      const name = `${mode}, ${addresses} addresses`;
      results.set(name, [...(results.get(name) ?? []), r]);
      const ok = r.requests.filter((t) => t.status === 200).length;
      console.error(`round ${round + 1} ${name}: ${ok}/${r.requests.length} ok, load ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`);
    }
  }
}
rmSync(work, { recursive: true, force: true });

const ms = (v: number) => (v < 10 ? v.toFixed(1) : v.toFixed(0));
const tally = (m: Map<number, number>) =>
  [...m]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');
console.log(`flood ${seconds} s per run after 2 s of flood alone, ${slowloris} slowloris connections, ${rounds} rounds`);
console.log('| serve, flood | legitimate requests answered 200 | median (ms) | p95 (ms) | first request of each user (ms) | load average | flood answers |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, runs] of results) {
  const all = runs.flatMap((r) => r.requests);
  const ok = all.filter((t) => t.status === 200);
  const lat = all.map((t) => t.ms);
  const firsts = runs.flatMap((r) => r.firsts.map(ms)).join(', ');
  const loads = runs.map((r) => `${r.load[0].toFixed(1)}-${r.load[1].toFixed(1)}`).join(', ');
  const floodAnswers = tally(new Map(runs.flatMap((r) => [...r.flood]).reduce((m, [s, n]) => m.set(s, (m.get(s) ?? 0) + n), new Map<number, number>())));
  console.log(
    `| ${name} | ${ok.length}/${all.length} (${((100 * ok.length) / all.length).toFixed(0)}%) | ${ms(median(lat))} | ${ms(percentile(lat, 95))} | ${firsts} | ${loads} | ${floodAnswers} |`,
  );
}
process.exit(0);
