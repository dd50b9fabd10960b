import { mkdir, readFile } from 'node:fs/promises';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, spawnCliJson } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** Connects to 127.0.0.1 as curl does: the CA trusted, the address checked against the certificate's SAN. */
function connectByAddress(port: number, caPem: string): Promise<{ authorized: boolean; san: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: caPem }, () => {
      const san = socket.getPeerCertificate().subjectaltname ?? '';
      socket.end();
      resolve({ authorized: socket.authorized, san });
    });
    socket.on('error', reject);
  });
}

describe('serve --ca names its certificate as its help says', () => {
  let dir = '';
  let cleanup: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('depotkit-serve-names-'));
    await mkdir(join(dir, 'root', 'PROD'), { recursive: true });
    expect((await runCli(['cert', 'ca', '--out', join(dir, 'ca'), '--key-size', '2048'])).code).toBe(0);
  });
  afterAll(() => cleanup());

  it('keeps the machine addresses when only --dns is given, so a client can reach it at 127.0.0.1', async () => {
    const caPem = await readFile(join(dir, 'ca', 'ca-cert.pem'), 'utf8');
    const serve = await spawnCliJson<{ port: number }>([
      'serve',
      join(dir, 'root'),
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--workers',
      '1',
      '--ca',
      join(dir, 'ca'),
      '--dns',
      'depot.lab.local',
      '--json',
    ]);
    try {
      const seen = await connectByAddress(serve.info.port, caPem);
      expect(seen.san).toContain('DNS:depot.lab.local');
      expect(seen.san).toContain('IP Address:127.0.0.1');
      expect(seen.authorized).toBe(true);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('says in its help that the addresses stay with --dns', async () => {
    const help = (await runCli(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--ip <addr> .*default: this machine's addresses, also with --dns/);
  });
});
