import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_ROOT_DIR } from '../../src/constants.js';
import type { DepotServer } from '../../src/server/index.js';
import { CLI, runCli } from '../helpers/cli.js';
import { AS_NPX, DEPOT_USER, runWithClosedStdout, useServedFixture, withoutNpm, type CliFixture } from './fixtures.js';

const run = promisify(execFile);

describe('output a reader stops reading, and hints as the user runs depotkit', () => {
  const served = useServedFixture('depotkit-cli-output-');
  let f: CliFixture;
  let server: DepotServer;
  beforeAll(() => {
    f = served.fixture();
    server = served.server();
  });

  const checkArgs = () => [
    'check',
    server.url.replace('127.0.0.1', 'localhost'),
    '--ca',
    f.caDir,
    '--user',
    DEPOT_USER,
    '--password-file',
    f.passwordFile,
    '--json',
  ];

  it('ends quietly when stdout is closed before it writes: cert inspect and check --json, with their own exit codes', async () => {
    const inspect = await runWithClosedStdout(['cert', 'inspect', f.chainFile]);
    expect(inspect.stderr).toBe('');
    expect(inspect.code).toBe(0);
    const check = await runWithClosedStdout(checkArgs());
    expect(check.stderr).not.toMatch(/EPIPE|\n\s+at /);
    expect(check.code).toBe(0);
  });

  it('piped into head -c 10: ten bytes out, nothing on stderr', async () => {
    for (const args of [['cert', 'inspect', f.chainFile], checkArgs()]) {
      const errFile = join(f.dir, 'stderr.txt');
      const quoted = args.map((a) => `'${a}'`).join(' ');
      const { stdout } = await run('bash', ['-c', `set -o pipefail; '${process.execPath}' '${CLI}' ${quoted} 2>'${errFile}' | head -c 10`]);
      expect(stdout).toHaveLength(10);
      expect(await readFile(errFile, 'utf8')).toBe('');
    }
  });

  it('names commands as npx depotkit through npx, and as depotkit otherwise', async () => {
    const prod = join(f.depot, DEPOT_ROOT_DIR);
    const plain = await runCli(['serve', prod, '--http'], { env: withoutNpm() });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`  depotkit serve ${f.depot}\n`);
    expect(plain.stderr).not.toContain('npx');
    const npx = await runCli(['serve', prod, '--http'], { env: { ...withoutNpm(), ...AS_NPX } });
    expect(npx.stderr).toContain(`  npx depotkit serve ${f.depot}\n`);
    const usage = await runCli(['serve', f.depot, '--workers', '0'], { env: { ...withoutNpm(), ...AS_NPX } });
    expect(usage.stderr).toContain('usage: npx depotkit serve [options] <dir>');
    // A result's own lines too, and the CA's name ("depotkit private CA") is left alone.
    const made = await runCli(['cert', 'ca', '--out', join(f.dir, 'ca-npx'), '--key-size', '2048'], { env: { ...withoutNpm(), ...AS_NPX } });
    expect(made.stdout).toContain(`then: npx depotkit cert issue --ca ${join(f.dir, 'ca-npx')}`);
    expect(made.stdout).toContain('Made CA CN=depotkit private CA');
    // A test runner started by npx is not depotkit started by npx.
    const other = await runCli(['serve', prod, '--http'], { env: { ...withoutNpm(), npm_lifecycle_event: 'npx', npm_lifecycle_script: 'vitest run' } });
    expect(other.stderr).toContain(`  depotkit serve ${f.depot}\n`);
  });
});
