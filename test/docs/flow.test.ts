/**
 * The README's flow by hand runs as written on a machine with the vendor's
 * metadata zip and names that resolve: its variables set for this one (a
 * vendor-like zip and downloads made here, the depot named localhost, the
 * installer a simulator), `depotkit` the built CLI, the admin password typed
 * on its standard input. Each step prints what its `prints:` comment says.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { REPO_ROOT, spawnCliJson, tempDir, type CliChild } from '../helpers/cli.js';
import {
  assignedNames,
  fixedWords,
  freePort,
  portAccepts,
  processesUnder,
  promisedLines,
  runBash,
  setVariables,
  shBlockAfter,
  writeDepotkitShim,
} from '../helpers/readme.js';
import { ARCHIVE_WRAPPER, listFiles, vendorArchiveSource, zipFolder } from '../depot/helpers.js';

/** The installer simulator's lab password, which it takes when given none. */
const ADMIN_PASSWORD = 'VMware1!VMware1!';

let tmp: { dir: string; cleanup: () => Promise<void> };
let installer: CliChild<{ url: string; port: number }>;
let installerCa: string;
beforeAll(async () => {
  tmp = await tempDir('depotkit-flow-');
  installerCa = join(tmp.dir, 'installer-ca.pem');
  installer = await spawnCliJson(['sim', 'installer', '--port', '0', '--cert-out', installerCa, '--quiet', '--json'], { cwd: tmp.dir });
}, 60_000);
afterAll(async () => {
  installer?.child.kill('SIGTERM');
  await installer?.exited;
  // Whatever a failed run left (the depot's server), so that nothing outlives the test.
  for (const pid of await processesUnder(tmp.dir)) process.kill(pid, 'SIGKILL');
  await tmp?.cleanup();
});

/** Whether each fixed word of `promised` is found in `output`, in order. */
function saysInOrder(output: string, promised: string): boolean {
  let at = 0;
  for (const words of fixedWords(promised)) {
    at = output.indexOf(words, at);
    if (at < 0) return false;
    at += words.length;
  }
  return true;
}

it("the README's flow by hand runs as written: build from the vendor's zip, CA and certificate, serve, check, the installer trusting and syncing the depot", async () => {
  const block = await shBlockAfter('README.md', '## The whole flow, by hand');
  const vendor = await vendorArchiveSource(join(tmp.dir, 'vendor'));
  // Downloaded beside the binaries, as the README's paths have it.
  const metadata = join(vendor.binariesDir, `${ARCHIVE_WRAPPER}.zip`);
  await zipFolder(vendor.metadataDir, metadata, ARCHIVE_WRAPPER);
  const work = join(tmp.dir, 'work');
  const depotPort = await freePort();
  const values = {
    depot_fqdn: 'localhost',
    depot_ip: '127.0.0.1',
    depot_port: depotPort,
    installer: installer.info.url,
    installer_ca: installerCa,
    metadata,
    binaries: vendor.binariesDir,
    work,
  };
  expect(assignedNames(block).sort()).toEqual(Object.keys(values).sort());
  const bin = join(tmp.dir, 'bin');
  await mkdir(bin);
  await writeDepotkitShim(bin);
  // The README's way to stop the server it leaves running.
  const script = `${setVariables(block, values)}\nkill "$serve_pid" && wait "$serve_pid"\n`;

  const { code, stdout, stderr } = await runBash(script, {
    cwd: tmp.dir,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    input: `${ADMIN_PASSWORD}\n`,
    seconds: 240,
    file: join(tmp.dir, 'flow.sh'),
  });
  expect(code, `the flow stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);

  const promised = promisedLines(block);
  expect(promised.length).toBeGreaterThanOrEqual(8);
  for (const line of promised) expect(saysInOrder(stdout, line), `prints: ${line}\n---\n${stdout}`).toBe(true);
  expect(stdout).toContain(`ok  depot localhost:${depotPort}: DEPOT_CONNECTION_SUCCESSFUL`);

  // The passwords: in files only their owner reads, never printed.
  for (const file of ['depot.pass', 'admin.pass']) expect((await stat(join(work, file))).mode & 0o777, file).toBe(0o600);
  expect(stdout + stderr).not.toContain(ADMIN_PASSWORD);
  await expect(stat(join(work, 'depot', DEPOT_PATHS.catalog))).resolves.toBeTruthy();

  // Stopped as the README says, nothing left running.
  expect(await processesUnder(work)).toEqual([]);
  expect(await portAccepts(depotPort)).toBe(false);

  // Had it been run in the checkout's own folder, git would ignore every file it wrote.
  const written = await listFiles(work);
  const ignored = spawnSync('git', ['-C', REPO_ROOT, 'check-ignore', '--stdin'], { input: written.join('\n'), encoding: 'utf8' }).stdout.split('\n');
  expect(written.filter((f) => !ignored.includes(f))).toEqual([]);
}, 300_000);
