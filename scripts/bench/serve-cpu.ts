/**
 * Where serve's CPU goes per GiB: one serving process in this process (no fork), the same file downloaded by
 * `curl -o /dev/null` over TLS 1.3 with TLS_AES_256_GCM_SHA384, this process's CPU time (every thread: the libuv
 * pool's file reads too) per GiB for each server given, alternated, median of the rounds. CPU time, not
 * wall time: it does not move with the load other processes put on the machine the way throughput does.
 *   npx tsx scripts/bench/serve-cpu.ts <work dir of scripts/bench/serve.sh> [rounds] [server,...] [streams]
 * A server is `<buffer KiB>` (reads as serve makes them: in the event loop while they are fast) or
 * `<buffer KiB>:pool` (every read through libuv's pool). The work dir holds the 1 GiB file and the certificate
 * serve.sh made.
 */
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { SERVE_METRIC_NAMES } from '../../src/constants.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';

const [work, roundsArg = '3', serversArg = '256:pool,256', streamsArg = '1'] = process.argv.slice(2);
if (!work) throw new Error('usage: serve-cpu.ts <work dir> [rounds] [server,...] [streams]');
const file = 'PROD/COMP/VCENTER/VMware-VCSA-all-9.0.0.0.1.iso';
const bytes = (await stat(join(work, 'root', file))).size;
const ca = join(work, 'pki/ca/ca-cert.pem');
const certPem = await readFile(join(work, 'pki/server/server-chain.pem'), 'utf8');
const keyPem = await readFile(join(work, 'pki/server/server-key.pem'), 'utf8');
const streams = Number(streamsArg);

function curl(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn('curl', ['-sS', '--fail', '--tlsv1.3', '--tls13-ciphers', 'TLS_AES_256_GCM_SHA384', '--cacert', ca, '-o', '/dev/null', url], {
      stdio: 'inherit',
    });
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`curl ${code}`))));
  });
}

const servers: { name: string; server: DepotServer; runs: number[]; rates: number[] }[] = [];
for (const name of serversArg.split(',')) {
  const [kib, mode] = name.split(':');
  // A bound of 0 makes the first read in the loop a slow one, and the pool then has every read for good.
  const fileReads = mode === 'pool' ? { loopBoundMs: 0, poolMs: Infinity } : undefined;
  const readBuffer = Number(kib) * 1024;
  const server = await startDepotServer({ root: join(work, 'root'), host: '127.0.0.1', port: 0, tls: { certPem, keyPem }, readBuffer, fileReads });
  servers.push({ name, server, runs: [], rates: [] });
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
for (let round = 0; round <= Number(roundsArg); round++) {
  for (const s of round % 2 ? [...servers].reverse() : servers) {
    const url = `https://localhost:${s.server.port}/${file}`;
    const before = process.cpuUsage();
    const started = performance.now();
    await Promise.all(Array.from({ length: streams }, () => curl(url)));
    const used = process.cpuUsage(before);
    // Wall throughput beside it: the figure the load moves, but the one where a read on another core overlaps the encryption.
    const rate = (streams * bytes) / 2 ** 20 / ((performance.now() - started) / 1000);
    const perGib = (used.user + used.system) / 1e6 / ((streams * bytes) / 2 ** 30);
    // Round 0 warms up.
    if (round > 0) s.runs.push(perGib);
    if (round > 0) s.rates.push(rate);
    console.log(
      `round ${round} ${s.name}: ${perGib.toFixed(3)} CPU s/GiB, ${rate.toFixed(0)} MiB/s (user ${(used.user / 1e6).toFixed(2)} s, system ${(used.system / 1e6).toFixed(2)} s, load ${loadavg()[0]!.toFixed(1)})`,
    );
  }
}
// Reads in the event loop that reached the bound (each sent the reads to the pool for a while), from the server's metrics.
const slowReads = (s: (typeof servers)[number]) => s.server.metricsSnapshot().find((m) => m.name === SERVE_METRIC_NAMES.slowFileReads)?.values[0]?.value ?? 0;
for (const s of servers)
  console.log(
    `${s.name}, ${streams} stream(s): median ${median(s.runs).toFixed(3)} CPU s/GiB of ${s.runs.map((r) => r.toFixed(2)).join(', ')}; median ${median(s.rates).toFixed(0)} MiB/s of ${s.rates.map((r) => r.toFixed(0)).join(', ')}; slow reads ${slowReads(s)}`,
  );
await Promise.all(servers.map((s) => s.server.close()));
