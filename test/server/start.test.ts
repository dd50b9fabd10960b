import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const run = promisify(execFile);

describe('npm start (depotkit start)', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterAll(async () => cleanup?.());

  it('makes the demo depot and PKI, serves it over HTTPS with Basic auth, and prints a curl line that works', async () => {
    const t = await tempDir();
    cleanup = t.cleanup;
    const child = spawnCli(['start', '--port', '0'], { cwd: t.dir });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
    const curlLine = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const match = /try: +(curl .*)\n/.exec(out);
        if (match) resolve(match[1]!);
      });
      void exited.then(() => reject(new Error(`start exited: ${err}`)));
    });
    expect(out).toMatch(/user: +depot/);
    expect(out).toMatch(/password file: +demo-pki\/depot-password/);
    expect(out).toMatch(/CA certificate: +demo-pki\/ca\/ca-cert\.pem/);
    const password = (await import('node:fs/promises')).readFile(join(t.dir, 'demo-pki', 'depot-password'), 'utf8');
    expect(out).not.toContain((await password).trim());
    expect((await stat(join(t.dir, 'demo-pki', 'depot-password'))).mode & 0o777).toBe(0o600);
    const ok = await run('bash', ['-c', `${curlLine} -s -o /dev/null -w '%{http_code}'`], { cwd: t.dir });
    expect(ok.stdout).toBe('200');
    const url = /-I (https:\/\/\S+)/.exec(curlLine)![1]!;
    const denied = await run('curl', ['-s', '-I', '--cacert', 'demo-pki/ca/ca-cert.pem', '-o', '/dev/null', '-w', '%{http_code}', url], { cwd: t.dir });
    expect(denied.stdout).toBe('401');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('stops gracefully on a Ctrl-C sent the moment it says Ctrl-C stops it, run after run', async () => {
    const t = await tempDir();
    try {
      // Before it listened for the signal ahead of that line, most such runs died of the SIGINT itself.
      for (let round = 0; round < 4; round++) {
        const child = spawnCli(['start', '--port', '0'], { cwd: t.dir });
        let out = '';
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
        const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          child.on('close', (code, signal) => resolve({ code, signal })),
        );
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (out.includes('Ctrl-C stops it.')) child.kill('SIGINT');
        });
        expect(await ended, err).toEqual({ code: 0, signal: null });
        expect(err).toContain('Stopped.');
      }
    } finally {
      await t.cleanup();
    }
  }, 60_000);
});
