import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CaMoveReport } from '../../src/procedures/index.js';
import { servedLeafSha256 } from '../../src/procedures/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { DEPOT_PASSWORD_ENV, PASSWORD_ENV, holds, moveFixture, type MoveFixture } from './ca-move-fixture.js';

const env = { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD };

describe('depotkit depot move-ca', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let fx: MoveFixture;
  let args: string[];
  beforeEach(async () => {
    tmp = await tempDir('depotkit-ca-move-cli-');
    fx = await moveFixture(tmp.dir, 3);
    const inventory = join(tmp.dir, 'consumers.yaml');
    const entries = fx.targets.map((t) => `  - { name: ${t.name}, url: "${t.url}", passwordEnv: ${PASSWORD_ENV}, insecure: true }`);
    await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
    args = [
      'depot',
      'move-ca',
      ...['--cert', fx.files.newCert, '--key', fx.files.newKey, '--new-ca', fx.files.newCa, '--old-ca', fx.files.oldCa],
      ...['--served-cert', fx.files.served.cert, '--served-key', fx.files.served.key, '--serve-pid', String(fx.serve.info.pid)],
      ...['--depot-url', fx.depotUrl, '--depot-user', DEPOT_USER, '--depot-password-env', DEPOT_PASSWORD_ENV, '--inventory', inventory],
    ];
  }, 120_000);
  afterEach(async () => {
    await fx?.close();
    await tmp.cleanup();
  });

  it('--dry-run prints the plan and changes nothing; the move then reports a row per consumer with its role and version', async () => {
    const dry = await runCli([...args, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Plan \(nothing done\):/);
    expect(dry.stdout).toMatch(/send SIGHUP to serve/);
    expect(await holds(fx.sims[0]!, fx.newCa.certPem)).toBe(false);

    const moved = await runCli([...args, '--remove-old', '--json'], { env });
    expect(moved.code, moved.stderr).toBe(0);
    const report = JSON.parse(moved.stdout) as CaMoveReport;
    expect(report.ok).toBe(true);
    const rows = report.phases.find((p) => p.phase === 'revalidate')!.rows!;
    expect(rows.map((r) => [r.name, r.ok, typeof r.role, typeof r.version])).toEqual(fx.targets.map((t) => [t.name, true, 'string', 'string']));
    expect(await servedLeafSha256(fx.depotUrl, 5000)).toBe(report.plan.leaf.sha256);
    expect(await holds(fx.sims[2]!, fx.oldCa.certPem)).toBe(false);
  }, 120_000);

  it("the text report says which way each consumer's new CA went: 9.1.1 with its depot settings, earlier versions by the separate import", async () => {
    const moved = await runCli(args, { env });
    expect(moved.code, moved.stderr).toBe(0);
    const lines = moved.stdout.split('\n');
    const importRows = lines.slice(lines.indexOf('import: ok') + 1, lines.indexOf('prove: ok'));
    expect(importRows).toEqual([
      expect.stringMatching(/^ {2}consumer-0 {2}VcfInstaller 9\.0\.2\S* {2}ok {2}via trusted-certificates$/),
      expect.stringMatching(/^ {2}consumer-1 {2}VcfInstaller 9\.1\.0\S* {2}ok {2}via trusted-certificates$/),
      expect.stringMatching(/^ {2}consumer-2 {2}VcfInstaller 9\.1\.1\S* {2}ok {2}via depot-settings$/),
    ]);
    // The import and the revalidation of consumer-2.
    expect(lines.filter((l) => l.endsWith('via depot-settings'))).toHaveLength(2);
  }, 120_000);

  it('refuses a new certificate that does not name the depot, before anything is changed', async () => {
    const moved = await runCli([...args, '--name', 'depot.elsewhere.test'], { env });
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/would fail validation/);
    expect(await holds(fx.sims[0]!, fx.newCa.certPem)).toBe(false);
  }, 120_000);
});
