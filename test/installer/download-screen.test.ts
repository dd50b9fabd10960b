import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { finalScreen, HAS_SCRIPT, onTerminal } from '../helpers/terminal.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER, startSim, startTestDepot, type TestDepot } from './helpers.js';
import { connectTask, downloadTask, runOnConsumers } from './commands.js';

/** `installer download` on a terminal: its bars end before its rows are printed, so the rows stay on the screen. */
describe.skipIf(!HAS_SCRIPT)('installer download on a terminal', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let depot: TestDepot;
  let sim: InstallerSimulator;
  let conn: string[];
  let files: { password: string; sim: string };
  beforeAll(async () => {
    tmp = await tempDir('depotkit-download-screen-');
    // Bundles large enough for the bars to be drawn before they end.
    depot = await startTestDepot(tmp.dir, { binarySize: 64 * 1024 });
    sim = await startSim();
    files = { password: join(tmp.dir, 'admin.pass'), sim: join(tmp.dir, 'sim.pem') };
    await writeFile(files.password, `${PASSWORD}\n`, { mode: 0o600 });
    await writeFile(files.sim, sim.caPem);
    conn = ['--installer', sim.url, '--user', USER, '--password-file', files.password, '--installer-ca', files.sim];
    const spec = { hostname: 'localhost', port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD };
    const connected = await runOnConsumers(
      { installer: sim.url, passwordFile: files.password, installerCa: files.sim },
      connectTask(spec, { caPems: [depot.ca.certPem] }),
    );
    expect(connected.ok, JSON.stringify(connected.rows)).toBe(true);
  });
  afterAll(async () => {
    await sim?.close();
    await depot?.close();
    await tmp?.cleanup();
  });

  it('shows every bundle SUCCESS on the final screen, and no bar', async () => {
    const output = await onTerminal(['installer', 'download', ...conn, '--release', '9.0.0.0']);
    const again = await runOnConsumers({ installer: sim.url, passwordFile: files.password, installerCa: files.sim }, downloadTask({ release: '9.0.0.0' }));
    const bundles = again.rows[0]!.result!.bundles;
    expect(bundles.length).toBeGreaterThan(3);
    // Bars were drawn: the terminal is what the test says it is.
    expect(output).toContain('%');
    const screen = finalScreen(output);
    expect(screen.filter((l) => /\bSUCCESS\b/.test(l))).toHaveLength(bundles.length);
    expect(screen.filter((l) => /\[[█░]+\]|\d+%/.test(l))).toEqual([]);
  });
});

/** A command with one byte bar: its report follows the bar, which is gone from the screen. */
describe.skipIf(!HAS_SCRIPT)('depot pack and unpack on a terminal', () => {
  it('end their bar before the report, which the final screen shows whole', async () => {
    const { dir, cleanup } = await tempDir('depotkit-pack-screen-');
    try {
      await makeDemoDepot(join(dir, 'depot'), { binarySize: 1024 * 1024 });
      for (const args of [
        ['depot', 'pack', join(dir, 'depot'), '--out', join(dir, 'media')],
        ['depot', 'unpack', join(dir, 'media'), '--out', join(dir, 'copy')],
      ]) {
        const { stdout: report } = await runCli(args.map((a) => a.replace(/(media|copy)$/, '$1-plain')));
        const output = await onTerminal(args);
        // A bar was drawn, then erased.
        expect(output).toMatch(/\[[█░]+\]/);
        const screen = finalScreen(output).filter((l) => l !== '');
        expect(screen.filter((l) => /\[[█░]+\]/.test(l))).toEqual([]);
        // The report's lines, all there after the bar (each by its start: names, seals and times differ from run to run).
        const lines = report.trim().split('\n');
        expect(screen.slice(-lines.length).map((l) => l.slice(0, 10))).toEqual(lines.map((l) => l.slice(0, 10)));
      }
    } finally {
      await cleanup();
    }
  });
});
