import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { servedLeafSha256 } from '../../src/procedures/index.js';
import { runCli } from '../helpers/cli.js';
import { DEPOT_PASSWORD, DEPOT_USER } from '../installer/helpers.js';
import { DEPOT_PASSWORD_ENV, PASSWORD_ENV, holds, useMoveFixture, type MoveFixture } from './ca-move-fixture.js';

const env = { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD };

describe('depotkit depot move-ca', () => {
  let fx: MoveFixture;
  let args: string[];
  // One fixture for the file: the refusal changes nothing, the move comes after it.
  useMoveFixture('depotkit-ca-move-cli-', 3, (made) => (fx = made));
  beforeAll(async () => {
    const inventory = join(fx.dir, 'consumers.yaml');
    const entries = fx.targets.map((t) => `  - { name: ${t.name}, url: "${t.url}", passwordEnv: ${PASSWORD_ENV}, insecure: true }`);
    await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
    args = [
      'depot',
      'move-ca',
      ...['--cert', fx.files.newCert, '--key', fx.files.newKey, '--new-ca', fx.files.newCa, '--old-ca', fx.files.oldCa],
      ...['--served-cert', fx.files.served.cert, '--served-key', fx.files.served.key, '--serve-pid', String(fx.serve.info.pid)],
      ...['--depot-url', fx.depotUrl, '--depot-user', DEPOT_USER, '--depot-password-env', DEPOT_PASSWORD_ENV, '--inventory', inventory],
    ];
  });

  it('refuses a new certificate that does not name the depot, before anything is changed', async () => {
    const moved = await runCli([...args, '--name', 'depot.elsewhere.test'], { env });
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/would fail validation/);
    expect(await holds(fx.sims[0]!, fx.newCa.certPem)).toBe(false);
  }, 120_000);

  it("--dry-run prints the plan and changes nothing; the move's text report then has a row per consumer with its role and version, and says which way its new CA went: 9.1.1 with its depot settings, earlier versions by the separate import", async () => {
    const dry = await runCli([...args, '--dry-run'], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/Plan \(nothing done\):/);
    expect(dry.stdout).toMatch(/send SIGHUP to serve/);
    expect(await holds(fx.sims[0]!, fx.newCa.certPem)).toBe(false);

    const moved = await runCli([...args, '--remove-old'], { env });
    expect(moved.code, moved.stderr).toBe(0);
    const lines = moved.stdout.split('\n');
    const rowsOf = (phase: string, next: string) => lines.slice(lines.indexOf(`${phase}: ok`) + 1, lines.indexOf(`${next}: ok`));
    expect(rowsOf('import', 'prove')).toEqual([
      expect.stringMatching(/^ {2}consumer-0 {2}VcfInstaller 9\.0\.2\S* {2}ok {2}via trusted-certificates$/),
      expect.stringMatching(/^ {2}consumer-1 {2}VcfInstaller 9\.1\.0\S* {2}ok {2}via trusted-certificates$/),
      expect.stringMatching(/^ {2}consumer-2 {2}VcfInstaller 9\.1\.1\S* {2}ok {2}via depot-settings$/),
    ]);
    // The import and the revalidation of consumer-2.
    expect(lines.filter((l) => l.endsWith('via depot-settings'))).toHaveLength(2);
    expect(rowsOf('revalidate', 'retire')).toEqual(
      fx.targets.map((t) => expect.stringMatching(new RegExp(`^ {2}${t.name} {2}VcfInstaller 9\\.\\S+ {2}ok\\b`))),
    );
    expect(lines).toContain('The depot is on the new CA; every consumer validated it.');
    const stateFile = join(fx.dir, 'depotkit-ca-move.json');
    const { leafSha256 } = JSON.parse(await readFile(stateFile, 'utf8')) as { leafSha256: string };
    expect(await servedLeafSha256(fx.depotUrl, 5000)).toBe(leafSha256);
    expect(await holds(fx.sims[2]!, fx.oldCa.certPem)).toBe(false);
  }, 120_000);
});
