/**
 * The README's flow by hand runs as written on a machine with the vendor's
 * metadata zip and names that resolve: its variables set for this one (a
 * vendor-like zip and downloads made here, the installer a simulator, started
 * here through the library, that resolves the depot's FQDN as a hosts file
 * would), `depotkit` the built CLI (its new RSA keys, of the sizes the block
 * asks for, from the suite's pool), the admin password typed on its standard
 * input. The block is pasted twice into the same shell, as a reader would;
 * each step prints what its `prints:` comment says, each time.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { REPO_ROOT, tempDir } from '../helpers/temp.js';
import {
  assignedNames,
  fixedWords,
  processesUnder,
  promisedLines,
  runBash,
  setVariables,
  shBlockAfter,
  shimEnv,
  writeDepotkitShim,
} from '../helpers/readme.js';
import { freePort, portAccepts } from '../helpers/ports.js';
import { ARCHIVE_WRAPPER, listFiles, vendorArchiveSource, zipFolder } from '../depot/helpers.js';

/** The installer simulator's lab password, which it takes when given none. */
const ADMIN_PASSWORD = 'VMware1!VMware1!';
/** The README's own depot name, which no DNS here resolves: the check goes by address, the installer is told where it is. */
const DEPOT_FQDN = 'depot.lab.local';
/** What the test prints between the two pastes of the block. */
const PASTED_AGAIN = '--- the block pasted again';

let tmp: { dir: string; cleanup: () => Promise<void> };
let installer: InstallerSimulator;
beforeAll(async () => {
  tmp = await tempDir('depotkit-flow-');
  installer = await startInstallerSimulator({ resolve: { [DEPOT_FQDN]: '127.0.0.1' } });
}, 60_000);
afterAll(async () => {
  await installer?.close();
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

/** The promised lines of `block`, but those it prints only the first time when `again`. */
function promisedFor(block: string, again: boolean): string[] {
  const once = new Set([...block.matchAll(/^#\s+prints, the first time:\s*(.+)$/gm)].map((m) => m[1]!.trim()));
  return promisedLines(block).filter((line) => !again || !once.has(line));
}

it("the README's flow by hand runs as written, pasted twice: build from the vendor's zip, CA and certificate, serve, check by address as the FQDN, the installer trusting and syncing the depot", async () => {
  const block = await shBlockAfter('README.md', '## The whole flow, by hand');
  const vendor = await vendorArchiveSource(join(tmp.dir, 'vendor'));
  // Downloaded beside the binaries, as the README's paths have it.
  const metadata = join(vendor.binariesDir, `${ARCHIVE_WRAPPER}.zip`);
  await zipFolder(vendor.metadataDir, metadata, ARCHIVE_WRAPPER);
  const work = join(tmp.dir, 'work');
  const depotPort = await freePort();
  // Not there yet: step 5 saves the certificate the installer shows.
  const savedInstallerCa = join(work, 'installer-ca.pem');
  const values = {
    depot_fqdn: DEPOT_FQDN,
    depot_ip: '127.0.0.1',
    depot_port: depotPort,
    installer: installer.url,
    installer_ca: savedInstallerCa,
    metadata,
    binaries: vendor.binariesDir,
    work,
  };
  expect(assignedNames(block).sort()).toEqual(Object.keys(values).sort());
  const bin = join(tmp.dir, 'bin');
  await mkdir(bin);
  await writeDepotkitShim(bin);
  // Pasted twice into one shell, then stopped the README's way: the first server must not outlive the second paste.
  // A server still running when the shell ends is named and stopped, so that a failed step fails at once.
  const leftRunning = `trap 'left=$(jobs -p); if [ -n "$left" ]; then echo "left running: $left" >&2; kill $left; fi' EXIT`;
  const flow = setVariables(block, values);
  const script = `${leftRunning}\n${flow}\necho '${PASTED_AGAIN}'\n${flow}\nkill "$serve_pid" && wait "$serve_pid"\n`;

  const { code, stdout, stderr } = await runBash(script, {
    cwd: tmp.dir,
    env: shimEnv(bin),
    input: `${ADMIN_PASSWORD}\n`,
    seconds: 240,
    file: join(tmp.dir, 'flow.sh'),
  });
  expect(code, `the flow stopped (exit ${code}):\n${stdout}\n${stderr}`).toBe(0);

  const runs = stdout.split(`${PASTED_AGAIN}\n`);
  expect(runs).toHaveLength(2);
  for (const [index, output] of runs.entries()) {
    const promised = promisedFor(block, index > 0);
    expect(promised.length).toBeGreaterThanOrEqual(index > 0 ? 7 : 8);
    for (const line of promised) expect(saysInOrder(output, line), `paste ${index + 1} prints: ${line}\n---\n${output}`).toBe(true);
    expect(output).toContain(`ok  depot ${DEPOT_FQDN}:${depotPort}: DEPOT_CONNECTION_SUCCESSFUL`);
  }
  expect(runs[1]).not.toContain('Made CA');
  expect(stderr).not.toMatch(/gave up waiting|left running|port .* (busy|in use)/i);

  // The installer's certificate saved in step 5 is the one it serves.
  const pem = (text: string) => /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(text)?.[0];
  expect(pem(await readFile(savedInstallerCa, 'utf8'))).toBe(pem(installer.caPem));

  // The passwords: in files only their owner reads, never printed.
  for (const file of ['depot.pass', 'admin.pass']) expect((await stat(join(work, file))).mode & 0o777, file).toBe(0o600);
  expect(stdout + stderr).not.toContain(ADMIN_PASSWORD);
  await expect(stat(join(work, 'depot', DEPOT_PATHS.catalog))).resolves.toBeTruthy();

  // Stopped as the README says, nothing left running: neither paste's server.
  expect(await processesUnder(work)).toEqual([]);
  expect(await portAccepts(depotPort)).toBe(false);

  // Had it been run in the checkout's own folder, git would ignore every file it wrote.
  const written = await listFiles(work);
  const ignored = spawnSync('git', ['-C', REPO_ROOT, 'check-ignore', '--stdin'], { input: written.join('\n'), encoding: 'utf8' }).stdout.split('\n');
  expect(written.filter((f) => !ignored.includes(f))).toEqual([]);
}, 300_000);
