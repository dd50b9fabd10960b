/**
 * The README's rehearsal runs as written: its shell block, unchanged but for
 * the ports (free ones, so that tests can run side by side), with `npx
 * depotkit` running the built CLI.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI, REPO_ROOT, tempDir } from '../helpers/cli.js';

const run = promisify(execFile);
const PORTS_LINE = /^depot_port=\d+ installer_port=\d+ vc_port=\d+$/m;

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  tmp = await tempDir('depotkit-rehearsal-');
});
afterAll(() => tmp?.cleanup());

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The first sh block after the heading. */
function blockAfter(markdown: string, heading: string): string {
  const at = markdown.indexOf(heading);
  expect(at, `README has "${heading}"`).toBeGreaterThan(-1);
  const match = /```sh\n([\s\S]*?)```/.exec(markdown.slice(at));
  expect(match).not.toBeNull();
  return match![1]!;
}

it("the README's rehearsal runs as written: depot served and checked, installer trusting it by its FQDN, management certificate replaced", async () => {
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = blockAfter(readme, '## Rehearsal');
  expect(block).toMatch(PORTS_LINE);
  const [depot, installer, vc] = await Promise.all([freePort(), freePort(), freePort()]);
  const script = block.replace(PORTS_LINE, `depot_port=${depot} installer_port=${installer} vc_port=${vc}`);

  // `npx depotkit ...` as a user runs it, here the built CLI.
  const bin = join(tmp.dir, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'npx'), `#!/bin/sh\n[ "$1" = depotkit ] || exit 127\nshift\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  await chmod(join(bin, 'npx'), 0o755);
  await writeFile(join(tmp.dir, 'rehearsal.sh'), script);

  const { stdout, stderr } = await run('timeout', ['180', 'bash', '-e', '-o', 'pipefail', join(tmp.dir, 'rehearsal.sh')], {
    cwd: tmp.dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    maxBuffer: 16 << 20,
  }).catch((err: { stdout: string; stderr: string; code: number }) => {
    throw new Error(`the rehearsal stopped (exit ${err.code}):\n${err.stdout}\n${err.stderr}`);
  });
  expect(stdout).toMatch(/ACCEPT/);
  expect(stdout).toMatch(/imported: CN=depotkit private CA/);
  expect(stdout).toContain(`depot depot.lab.local:${depot}: DEPOT_CONNECTION_SUCCESSFUL`);
  expect(stdout).toMatch(/Replaced the certificate of https:\/\/127\.0\.0\.1:\d+ [\s\S]*issued by CN=depotkit private CA[\s\S]*verified: trusted by the CA/);
  expect(stdout + stderr).not.toContain('Dep0t-Secret');
  expect(stdout + stderr).not.toContain('VMware1!VMware1!');
}, 240_000);
