// Benchmark: a logged-in user's latency on `depotkit serve --htpasswd` (bcrypt cost 12) while
// flood clients send wrong passwords as fast as they are answered. Each flood client has its own
// loopback address (127.0.0.2, .3, ...), as attackers on a network would; the logged-in user is
// 127.0.0.1 and has logged in once before the flood (its later checks come from the cache).
// The user's requests are sequential GETs of the catalog, on one keep-alive connection and on a new
// connection each. Usage:
//   npx tsx scripts/bench/auth-flood.ts [seconds, default 10] [flood clients, default 20] [workers, default: cores]
// (run `npm run build` first: the server under test is dist/cli/main.js)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { DEPOT_PATHS } from '../../src/constants.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';

const seconds = Number(process.argv[2] ?? 10);
const floodClients = Number(process.argv[3] ?? 20);
const workers = Number(process.argv[4] ?? availableParallelism());
const cli = join(import.meta.dirname, '../../dist/cli/main.js');
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-auth-'));
const USER = 'depot';
const PASSWORD = 'Bench-Depot-1!';

mkdirSync(join(work, 'web', 'PROD/metadata/productVersionCatalog/v1'), { recursive: true });
writeFileSync(join(work, 'web', DEPOT_PATHS.catalog), '{"patches": {}}\n');
writeFileSync(join(work, 'htpasswd'), `${USER}:${bcrypt.hashSync(PASSWORD, 12)}\n`);
const ca = await createCa({ keySize: 2048 });
const cert = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
writeFileSync(join(work, 'cert.pem'), cert.chainPem);
writeFileSync(join(work, 'key.pem'), cert.keyPem, { mode: 0o600 });

const server = spawn(
  process.execPath,
  [
    cli,
    'serve',
    join(work, 'web'),
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--cert',
    join(work, 'cert.pem'),
    '--key',
    join(work, 'key.pem'),
    '--htpasswd',
    join(work, 'htpasswd'),
    '--workers',
    String(workers),
    '--json',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    try {
      resolve((JSON.parse(out) as { url: string }).url);
    } catch {
      // Not the whole line yet.
    }
  });
  server.once('exit', () => reject(new Error('serve exited before it was ready')));
});
const target = `${url.replace('localhost', '127.0.0.1')}/${DEPOT_PATHS.catalog}`;
const basic = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

/** One GET; resolves with its status and milliseconds. */
function get(agent: Agent | false, authorization: string, localAddress?: string): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const req = request(target, { agent, ca: ca.certPem, servername: 'localhost', localAddress, headers: { authorization } }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start }));
    });
    req.setTimeout(60_000, () => req.destroy());
    req.once('error', () => resolve({ status: 0, ms: performance.now() - start }));
    req.end();
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** The logged-in user's sequential requests until `until`, on one keep-alive connection or a new one each. */
async function user(until: number, keepAlive: boolean): Promise<number[]> {
  const agent = keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
  const latencies: number[] = [];
  while (performance.now() < until) {
    const r = await get(agent, basic(PASSWORD), '127.0.0.1');
    if (r.status !== 200) throw new Error(`the logged-in user got ${r.status}`);
    latencies.push(r.ms);
  }
  if (agent) agent.destroy();
  return latencies;
}

// Log in once: later checks of the same credentials come from the cache.
for (let i = 0; i < 2 * workers; i++) await get(false, basic(PASSWORD), '127.0.0.1');
const quiet = [...(await user(performance.now() + 2000, true)), ...(await user(performance.now() + 2000, false))];

const statuses = new Map<number, number>();
let floodRunning = true;
async function flood(i: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const localAddress = `127.0.0.${2 + i}`;
  while (floodRunning) {
    const r = await get(agent, basic(randomBytes(9).toString('base64')), localAddress);
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  }
  agent.destroy();
}
const floods = Array.from({ length: floodClients }, (_, i) => flood(i));
// Half the time on one keep-alive connection, half on a new connection per request.
const half = (seconds * 1000) / 2;
const kept = await user(performance.now() + half, true);
const fresh = await user(performance.now() + half, false);
floodRunning = false;
await Promise.race([Promise.all(floods), new Promise((r) => setTimeout(r, 60_000))]);
server.kill('SIGTERM');
rmSync(work, { recursive: true, force: true });

const row = (what: string, l: number[]) =>
  `| ${what} | ${l.length} | ${percentile(l, 50).toFixed(1)} | ${percentile(l, 90).toFixed(1)} | ${Math.max(...l).toFixed(1)} |`;
console.log(`serve --htpasswd (bcrypt 12), ${workers} serving process(es); ${floodClients} flood clients for ${seconds} s`);
console.log('| logged-in user | requests | median (ms) | p90 (ms) | max (ms) |');
console.log('|---|---|---|---|---|');
console.log(row('no flood (both kinds)', quiet));
console.log(row('flood, keep-alive', kept));
console.log(row('flood, new connection each', fresh));
console.log(
  `flood answers: ${[...statuses]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')}`,
);
process.exit(0);
