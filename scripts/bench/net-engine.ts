// Benchmark: which HTTP engine the network layer (src/net/) runs on, node:https or undici. Three
// figures per engine, each in a fresh Node process against one HTTPS server on loopback:
//   start-up: a process that loads the engine, makes one GET and exits (what `installer status` pays);
//   small:    2,000 GETs of 1 KiB over 8 kept-alive connections (check's HEAD sweep, a fleet's API calls);
//   large:    one GET of 512 MiB, read to the end (the mirror's binaries).
// Usage: npx tsx scripts/bench/net-engine.ts [rounds, default 5]
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer } from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { createCa, issueServerCert } from '../../src/cert/index.js';

const rounds = Number(process.argv[2] ?? 5);
const work = mkdtempSync(join(tmpdir(), 'depotkit-bench-net-'));
const ca = await createCa({ keySize: 2048 });
const leaf = await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 });
writeFileSync(join(work, 'ca.pem'), ca.certPem);

const LARGE = 512 * 1024 * 1024;
const block = Buffer.alloc(1 << 20, 7);
const small = Buffer.alloc(1024, 7);
const server = createServer({ key: leaf.keyPem, cert: leaf.certPem }, (req, res) => {
  if (req.url === '/large') {
    res.writeHead(200, { 'content-length': LARGE });
    let sent = 0;
    const more = () => {
      while (sent < LARGE) {
        sent += block.length;
        if (!res.write(block)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  } else res.end(small);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;

// Each client is a module run by a fresh `node`: the engine is loaded by the timed process itself.
const clients: Record<string, string> = {
  'node:https': `
    import { Agent, request } from 'node:https';
    import { readFileSync } from 'node:fs';
    const agent = new Agent({ keepAlive: true, maxSockets: 8, ca: readFileSync(process.env.CA) });
    const get = (path) => new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port: process.env.PORT, path, agent }, (res) => {
        let n = 0; res.on('data', (c) => (n += c.length)); res.on('end', () => resolve(n)); res.on('error', reject);
      }).on('error', reject).end();
    });
    await run(get); agent.destroy();`,
  undici: `
    const { Agent, request } = await import(process.env.UNDICI);
    import { readFileSync } from 'node:fs';
    const agent = new Agent({ connections: 8, connect: { ca: readFileSync(process.env.CA) } });
    const get = async (path) => {
      const res = await request('https://127.0.0.1:' + process.env.PORT + path, { dispatcher: agent });
      let n = 0; for await (const c of res.body) n += c.length; return n;
    };
    await run(get); await agent.close();`,
};
const runs: Record<string, string> = {
  startup: `async function run(get) { await get('/small'); }`,
  small: `async function run(get) { let left = 2000; await Promise.all(Array.from({ length: 8 }, async () => { while (left-- > 0) await get('/small'); })); }`,
  large: `async function run(get) { await get('/large'); }`,
};

// Not execFileSync: the server answers from this process's event loop.
async function timed(engine: string, what: string): Promise<number> {
  const file = join(work, `${engine.replace(':', '-')}-${what}.mjs`);
  writeFileSync(file, `${runs[what]}\n${clients[engine]}\n`);
  const started = process.hrtime.bigint();
  await promisify(execFile)(process.execPath, [file], {
    env: { ...process.env, UNDICI: pathToFileURL(createRequire(import.meta.url).resolve('undici')).href, CA: join(work, 'ca.pem'), PORT: String(port) },
    cwd: join(import.meta.dirname, '../..'),
  });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
try {
  for (const what of Object.keys(runs)) {
    // Engines alternate within each round, so that a change of the machine's load falls on both.
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(clients).map((e) => [e, []]));
    for (let round = 0; round < rounds; round++) for (const engine of Object.keys(clients)) times[engine]!.push(await timed(engine, what));
    for (const engine of Object.keys(clients)) {
      const m = median(times[engine]!);
      const rate = what === 'large' ? `${(LARGE / 2 ** 20 / m).toFixed(0)} MiB/s` : what === 'small' ? `${(2000 / m).toFixed(0)} req/s` : '';
      console.log(`${what.padEnd(8)} ${engine.padEnd(11)} median ${m.toFixed(3)} s ${rate}  (${times[engine]!.map((t) => t.toFixed(3)).join(' ')})`);
    }
  }
} finally {
  server.close();
  rmSync(work, { recursive: true, force: true });
}
