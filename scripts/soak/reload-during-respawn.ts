// Reproduces what the soak saw as stale certificates: a certificate rotated, then SIGHUP to `depotkit serve`
// while it replaces a worker that died. Each trial issues a new certificate from the same CA over the served
// files, SIGKILLs the worker and sends SIGHUP `delay` ms after the replacement was forked (a delay written
// with a minus: SIGHUP first, the kill that many ms later), waits for serve to say it reloaded, then opens
// new TLS connections and counts those still given the previous certificate (the kernel spreads them over
// both processes). None is right; until the next SIGHUP, the replacement serves the previous certificate.
// Linux only, 127.0.0.1 only.
//
//   npx tsx scripts/soak/reload-during-respawn.ts [--delays 0,50,150,400,1500,5000,-0,-5,-20] [--connections 40] [--cli dist/cli/main.js]
//
// Exit code 1 when a trial saw a stale certificate.
import { execFileSync, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from 'node:tls';
import { parseArgs } from 'node:util';
import { childrenOf } from './procfs.js';

const { values: args } = parseArgs({
  options: {
    delays: { type: 'string', default: '0,50,150,400,1500,5000,-0,-5,-20' },
    connections: { type: 'string', default: '40' },
    cli: { type: 'string', default: join(import.meta.dirname, '../../dist/cli/main.js') },
  },
});
const cli = resolve(args.cli!);
const work = mkdtempSync(join(tmpdir(), 'depotkit-reload-race-'));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const depotkit = (...argv: string[]) => execFileSync(process.execPath, [cli, ...argv], { encoding: 'utf8' });

depotkit('depot', 'demo', join(work, 'depot'), '--binary-size', '1K');
depotkit('cert', 'ca', '--out', join(work, 'ca'), '--key-size', '2048');
const ca = readFileSync(join(work, 'ca/ca-cert.pem'), 'utf8');
const certPath = join(work, 'cert.pem');
const keyPath = join(work, 'key.pem');

/** A new certificate renamed over the served pair; its SHA-256 fingerprint. */
function rotate(): string {
  const out = join(work, 'issued');
  depotkit('cert', 'issue', '--ca', join(work, 'ca'), '--dns', 'localhost', '--ip', '127.0.0.1', '--out', out, '--force');
  const fp = new X509Certificate(readFileSync(join(out, 'server-cert.pem'))).fingerprint256;
  renameSync(join(out, 'server-key.pem'), keyPath);
  renameSync(join(out, 'server-chain.pem'), certPath);
  return fp;
}

writeFileSync(join(work, 'password'), 'race\n', { mode: 0o600 });
const serveArgs = ['serve', join(work, 'depot'), '--host', '127.0.0.1', '--port', '0', '--cert', certPath, '--key', keyPath];

/**
 * One trial on a new server (its first worker to die is replaced at once; later ones after a back-off): the number of
 * new connections given the previous certificate after the reload.
 */
async function trial(text: string): Promise<number> {
  rotate();
  const serve = spawn(process.execPath, [cli, ...serveArgs, '--user', 'race', '--password-file', join(work, 'password'), '--workers', '2', '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let said = '';
  serve.stderr.setEncoding('utf8').on('data', (d: string) => (said += d));
  const { port, pid } = await new Promise<{ port: number; pid: number }>((done, fail) => {
    serve.stdout.setEncoding('utf8').once('data', (d: string) => done(JSON.parse(d) as { port: number; pid: number }));
    serve.once('exit', () => fail(new Error(`serve ended: ${said}`)));
  });
  /** The fingerprint of the certificate a new connection is given. */
  const served = () =>
    new Promise<string>((done) => {
      const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        done(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      });
      socket.on('error', (err) => done(`error: ${err.message}`));
    });
  const reloaded = async () => {
    const count = () => (said.match(/Reloaded the certificate|reload failed/g) ?? []).length;
    const before = count();
    process.kill(pid, 'SIGHUP');
    for (let i = 0; i < 200 && count() === before; i++) await sleep(50);
  };

  const delay = Math.abs(Number(text));
  const hupFirst = text.trim().startsWith('-');
  await sleep(1_000);
  const workers = childrenOf(pid);
  const previous = await served();
  const next = rotate();
  const t = Date.now();
  let how: string;
  if (hupFirst) {
    const reload = reloaded();
    await sleep(delay);
    process.kill(workers[0]!, 'SIGKILL');
    await reload;
    how = `SIGHUP, worker killed ${delay} ms later`;
  } else {
    process.kill(workers[0]!, 'SIGKILL');
    while (childrenOf(pid).every((p) => workers.includes(p)) && Date.now() - t < 10_000) await sleep(5);
    how = `worker killed, replacement forked after ${Date.now() - t} ms, SIGHUP ${delay} ms later`;
    await sleep(delay);
    await reloaded();
  }
  // The replacement is serving by now.
  await sleep(3_000);
  const seen = { next: 0, previous: 0, other: 0 };
  for (let i = 0; i < Number(args.connections); i++) {
    const fp = await served();
    seen[fp === next ? 'next' : fp === previous ? 'previous' : 'other']++;
  }
  const lines = said.split('\n').filter((l) => /reload|worker/i.test(l) && !/^SIGHUP reloads/.test(l));
  console.log(`${how}: ${seen.next} new certificate, ${seen.previous} previous${seen.other ? `, ${seen.other} other` : ''}; serve said: ${lines.join(' / ')}`);
  serve.kill('SIGTERM');
  await new Promise((r) => serve.once('exit', r));
  return seen.previous;
}

let stale = 0;
for (const text of args.delays!.split(',')) stale += await trial(text);
rmSync(work, { recursive: true, force: true });
process.exit(stale > 0 ? 1 : 0);
