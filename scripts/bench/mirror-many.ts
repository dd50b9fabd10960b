// Benchmark: the memory and time of depot mirror over a catalog of many tiny
// binaries (200,000 by default), served by a generating HTTPS server on
// loopback: the mirror's peak resident memory (VmHWM, read as it exits), the
// bytes it wrote (wchar) and its wall time, for the first run and for a
// re-run with everything in place. (The catalog names VCENTER only, so depot
// verify's checks fail at the end: exit 1 is expected.)
// Usage:
//   npx tsx scripts/bench/mirror-many.ts [binaries, default 200000] [concurrency, default 4] [work dir]
// (run `npm run build` first: the CLI under test is dist/cli/main.js). Every
// file is flushed to disk before it is renamed, which a disk serialises: a
// work dir on tmpfs (/dev/shm) measures the mirror itself in minutes.
// DEPOTKIT_CLI: another build of the CLI (e.g. of a commit).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { manyTinyBinaries } from '../../test/transfer/generated.js';
import { sendFile, startUpstream } from '../../test/transfer/upstream.js';

const count = Number(process.argv[2] ?? 200_000);
const concurrency = Number(process.argv[3] ?? 4);
const repo = join(import.meta.dirname, '../..');
const cli = process.env.DEPOTKIT_CLI ?? join(repo, 'dist/cli/main.js');
const preload = join(repo, 'test/transfer/exit-measure.mjs');
const work = mkdtempSync(join(process.argv[4] ?? tmpdir(), 'depotkit-bench-mirror-many-'));

async function run(args: string[]): Promise<{ code: number; seconds: number; peakMiB: number; writtenMiB: number; stderr: string }> {
  const measureFile = join(work, 'measure.json');
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--import', preload, cli, ...args], {
    env: { ...process.env, EXIT_MEASURE_FILE: measureFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const measured = JSON.parse(readFileSync(measureFile, 'utf8')) as { peakKiB: number; writtenBytes: number };
  return { code, seconds, peakMiB: measured.peakKiB / 1024, writtenMiB: measured.writtenBytes / 1024 ** 2, stderr: stderr.slice(-2000) };
}

try {
  const ca = await createCa({ keySize: 2048 });
  const issued = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
  writeFileSync(join(work, 'ca.pem'), ca.certPem);
  const served = join(work, 'served');
  await makeDemoDepot(served, { binarySize: 0 });
  const generated = manyTinyBinaries(count);
  const upstream = await startUpstream({ certPem: issued.chainPem, keyPem: issued.keyPem }, (path, _req, res) => {
    if (path === DEPOT_PATHS.catalog) return void res.writeHead(200, { 'content-length': generated.catalog.length }).end(generated.catalog);
    const body = generated.body(path);
    if (body) return void res.writeHead(200, { 'content-length': body.length }).end(body);
    void sendFile(join(served, path), res);
  });
  console.log(`${count} binaries, catalog ${(generated.catalog.length / 1024 ** 2).toFixed(1)} MiB, concurrency ${concurrency}; ${process.version}`);
  const out = join(work, 'mirror');
  const args = ['depot', 'mirror', upstream.url, '--out', out, '--ca', join(work, 'ca.pem'), '--concurrency', String(concurrency), '--json'];
  for (const label of ['first run', 're-run (all in place)']) {
    const r = await run(args);
    console.log(`${label}: exit ${r.code}, ${r.seconds.toFixed(1)} s, peak RSS ${r.peakMiB.toFixed(0)} MiB, ${r.writtenMiB.toFixed(0)} MiB written`);
    if (r.code !== 0 && r.code !== 1) console.log(r.stderr);
  }
  await upstream.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
