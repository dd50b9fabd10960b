// The ceiling of any Node client on this machine: downloads every VIB of a "sha256  path" list over
// node:https in THREADS worker threads, CONNECTIONS kept-alive connections each, each body hashed and
// written synchronously as it arrives. No checks, no resume, no flushing: what a mirror cannot beat.
// Usage: node scripts/bench/esx-ceiling.mjs <base URL> <CA file> <list> <out dir>   [THREADS=2] [CONNECTIONS=2]
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import https from 'node:https';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

async function download({ base, ca, out, files, connections }) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: connections, ca });
  let next = 0;
  let bad = 0;
  const fetchOne = ([sha256, path]) =>
    new Promise((resolve, reject) => {
      const target = join(out, path);
      mkdirSync(dirname(target), { recursive: true });
      https
        .get(`${base}/${path}`, { agent }, (res) => {
          const hash = createHash('sha256');
          const fd = openSync(target, 'w');
          res.on('data', (chunk) => {
            hash.update(chunk);
            writeSync(fd, chunk);
          });
          res.on('end', () => {
            closeSync(fd);
            if (hash.digest('hex') !== sha256) bad++;
            resolve();
          });
          res.on('error', reject);
        })
        .on('error', reject);
    });
  const lane = async () => {
    while (next < files.length) await fetchOne(files[next++]);
  };
  await Promise.all(Array.from({ length: connections }, lane));
  agent.destroy();
  return bad;
}

if (isMainThread) {
  const [base, caFile, listFile, out] = process.argv.slice(2);
  const threads = Number(process.env.THREADS ?? 2);
  const connections = Number(process.env.CONNECTIONS ?? 2);
  const list = readFileSync(listFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split('  '));
  const ca = readFileSync(caFile, 'utf8');
  const bad = await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      const files = list.filter((_, i) => i % threads === t);
      return new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), { workerData: { base, ca, out, files, connections } });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    }),
  );
  const wrong = bad.reduce((a, b) => a + b, 0);
  if (wrong > 0) {
    console.error(`${wrong} files had another SHA-256 than listed`);
    process.exit(1);
  }
} else {
  parentPort.postMessage(await download(workerData));
}
