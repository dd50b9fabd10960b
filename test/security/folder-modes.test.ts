/**
 * The folders depotkit makes for keys and exported configurations have their
 * own modes, set explicitly: under `umask 000` they were made world-writable
 * (0777), so anyone on the machine could swap the CA key or a web server's
 * configuration. A folder the user made is left as it is.
 */
import { spawn } from 'node:child_process';
import { mkdir, chmod, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { CA_KEY_FILE, SERVER_KEY_FILE } from '../../src/cert/files.js';
import { CLI, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-folder-modes-'));
});
afterAll(() => cleanup?.());

/** Runs the built CLI under a shell's `umask 000`, as a careless service or user would. */
function runUnderUmask000(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('/bin/sh', ['-c', `umask 000; exec ${quoted}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('folders made under umask 000', () => {
  it('cert ca and cert issue make their folders (and missing parents) 0700, keys 0600; export makes its folders 0750', async () => {
    const caDir = join(dir, 'pki', 'ca');
    const ca = await runUnderUmask000(['cert', 'ca', '--out', caDir, '--key-size', '2048']);
    expect(ca.code, ca.stderr).toBe(0);
    expect(await modeOf(caDir)).toBe(0o700);
    expect(await modeOf(join(dir, 'pki'))).toBe(0o700);
    expect(await modeOf(join(caDir, CA_KEY_FILE))).toBe(0o600);

    const serverDir = join(dir, 'server');
    const issued = await runUnderUmask000(['cert', 'issue', '--ca', caDir, '--dns', 'depot.lab.local', '--out', serverDir, '--key-size', '2048']);
    expect(issued.code, issued.stderr).toBe(0);
    expect(await modeOf(serverDir)).toBe(0o700);
    expect(await modeOf(join(serverDir, SERVER_KEY_FILE))).toBe(0o600);

    const root = join(dir, 'web');
    await mkdir(join(root, DEPOT_PATHS.catalog, '..'), { recursive: true });
    await writeFile(join(root, DEPOT_PATHS.catalog), '{"patches": {}}\n');
    const out = join(dir, 'nginx');
    const exported = await runUnderUmask000([
      'export',
      'nginx',
      root,
      '--out',
      out,
      '--cert',
      join(serverDir, 'server-chain.pem'),
      '--key',
      join(serverDir, SERVER_KEY_FILE),
      '--status-page',
      // A group this machine does not have: the folders' group is left to the user, in a step of its own.
      '--group',
      'depotkit-nogroup',
      '--json',
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(await modeOf(out)).toBe(0o750);
    expect(await modeOf(join(out, 'status'))).toBe(0o750);
    const report = JSON.parse(exported.stdout) as { nextSteps: string[] };
    expect(report.nextSteps).toContain(
      `sudo chgrp depotkit-nogroup ${out} ${join(out, 'status')}   # made 0750: the depotkit-nogroup group must reach the files in it`,
    );
  });

  it('leaves a folder the user made as it is', async () => {
    const caDir = join(dir, 'mine');
    await mkdir(caDir);
    await chmod(caDir, 0o755);
    const ca = await runUnderUmask000(['cert', 'ca', '--out', caDir, '--key-size', '2048']);
    expect(ca.code, ca.stderr).toBe(0);
    expect(await modeOf(caDir)).toBe(0o755);
    expect(await modeOf(join(caDir, CA_KEY_FILE))).toBe(0o600);
  });
});
