// Benchmark: depotkit check of a 500-binary depot (HEAD each) against curl's
// parallel HEADs, and check --deep over several GB against `curl | sha256sum`,
// both against the same nginx on loopback. Usage:
//   npx tsx scripts/bench/check.ts [deep-file-size-MiB, default 1024] [deep-file-count, default 4]
// (run `npm run build` first: the CLI under test is dist/cli/main.js)
import { execFileSync, execSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert } from '../../src/cert/index.js';
import { startNginx } from '../../test/helpers/nginx.js';

const deepMiB = Number(process.argv[2] ?? 1024);
const deepCount = Number(process.argv[3] ?? 4);
const cli = join(import.meta.dirname, '../../dist/cli/main.js');
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-check-'));
const time = (fn: () => void) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
};

/** A depot whose catalog names `count` binaries of `size` bytes in VCENTER. */
async function depotWith(dir: string, count: number, size: number) {
  await makeDemoDepot(dir, { binarySize: 0 });
  const bundle = { name: 'bench', type: 'INSTALL', binaries: [] as { fileName: string; size: number; checksum: string }[] };
  const block = randomBytes(Math.min(size, 1 << 24));
  for (let i = 0; i < count; i++) {
    const fileName = `bench-${i}.bin`;
    const path = join(dir, 'PROD/COMP/VCENTER', fileName);
    const hash = createHash('sha256');
    const fd = openSync(path, 'w');
    for (let written = 0, index = 0; written < size; written += block.length, index++) {
      const chunk = block.subarray(0, Math.min(block.length, size - written));
      if (chunk.length >= 8) chunk.writeBigUInt64BE(BigInt(index + i * 1e6), 0);
      hash.update(chunk);
      writeSync(fd, chunk);
    }
    closeSync(fd);
    bundle.binaries.push({ fileName, size, checksum: hash.digest('hex') });
  }
  writeFileSync(join(dir, DEPOT_PATHS.catalog), JSON.stringify({ patches: { VCENTER: [{ productVersion: '9.0.0.0.1', artifacts: { bundles: [bundle] } }] } }));
  return bundle.binaries;
}

const HOST = 'depot.bench';
const ca = await createCa({ keySize: 2048 });
const server = await issueServerCert(ca, { dns: [HOST], keySize: 2048 });
const caFile = join(work, 'ca.pem');
writeFileSync(caFile, ca.certPem);
const tls = { certPem: server.chainPem, keyPem: server.keyPem };
const checkArgs = (url: string) => [cli, 'check', url, '--ca', caFile, '--as-host', HOST, '--json'];
// curl trusts the same CA and resolves the name to the server's address.
const curlTls = (port: number) => `--cacert ${caFile} --resolve ${HOST}:${port}:127.0.0.1`;

const results: [string, number, string, number][] = [];
{
  const dir = join(work, 'many');
  const binaries = await depotWith(dir, 500, 4096);
  const nginx = await startNginx({ root: dir, ...tls });
  const named = `https://${HOST}:${nginx.port}`;
  const urls = binaries.map((b) => `url = "${named}/PROD/COMP/VCENTER/${b.fileName}"\noutput = "/dev/null"`).join('\n');
  writeFileSync(join(work, 'urls'), urls);
  const ours = time(() => execFileSync('node', checkArgs(nginx.url), { stdio: 'ignore' }));
  const ref = time(() => execSync(`curl -s -f -Z --parallel-max 16 -I ${curlTls(nginx.port)} -K ${join(work, 'urls')} -w "%{http_code}\\n" | grep -c 200`));
  results.push(['check: 500 binaries, HEAD each (concurrency 16)', ours, 'curl -Z -I, parallel 16', ref]);
  await nginx.stop();
}
{
  const dir = join(work, 'deep');
  mkdirSync(dir);
  const binaries = await depotWith(dir, deepCount, deepMiB << 20);
  const nginx = await startNginx({ root: dir, ...tls });
  const ours = time(() => execFileSync('node', [...checkArgs(nginx.url), '--deep'], { stdio: 'ignore' }));
  const ref = time(() => {
    for (const b of binaries)
      execSync(`curl -s ${curlTls(nginx.port)} https://${HOST}:${nginx.port}/PROD/COMP/VCENTER/${b.fileName} | sha256sum`, { stdio: 'ignore' });
  });
  results.push([`check --deep: ${deepCount} x ${deepMiB} MiB`, ours, 'curl | sha256sum, one after another', ref]);
  await nginx.stop();
}
rmSync(work, { recursive: true, force: true });
console.log('| measurement | depotkit (s) | reference | reference (s) | ratio (ref/depotkit) |\n|---|---|---|---|---|');
for (const [what, ours, ref, refS] of results) console.log(`| ${what} | ${ours.toFixed(2)} | ${ref} | ${refS.toFixed(2)} | ${(refS / ours).toFixed(2)} |`);
