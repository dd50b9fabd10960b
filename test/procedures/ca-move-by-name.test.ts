/**
 * A depot the consumers know by a name this host does not resolve (the README's set-up: the installer
 * resolves the depot's FQDN, this host reaches it by address, as `check --as-host` does). The move
 * reaches the depot at its address and gives the consumers their name for it, never the address.
 */
import { lookup } from 'node:dns/promises';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InstallerClient } from '../../src/installer/index.js';
import { moveDepotCa, servedLeafSha256, type CaMoveOptions, type CaMoveReport } from '../../src/procedures/index.js';
import type { InstallerSimulator } from '../../src/simulators/installer/index.js';
import { DepotkitError, EXIT } from '../../src/util/errors.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER } from '../installer/helpers.js';
import {
  DEPOT_PASSWORD_ENV,
  MOVE_PHASES,
  PASSWORD_ENV,
  depotSpec,
  holds,
  moveFixture,
  serveMoveOptions,
  whileValidating,
  type MoveFixture,
} from './ca-move-fixture.js';

// Reserved never to resolve (RFC 6761): only the simulated consumers, told to, resolve it.
const DEPOT_NAME = 'depot.lab.invalid';
// 9.0.2, 9.1.0 and 9.1.1, each twice: the separate import and the depot settings' certificates.
const CONSUMERS = 6;

function options(fx: MoveFixture, extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  return serveMoveOptions(fx, { depot: depotSpec(fx.addressUrl), asHost: DEPOT_NAME, concurrency: CONSUMERS, ...extra });
}

/** The depot host and port each consumer's settings name. */
async function depotHosts(sims: Array<InstallerSimulator | undefined>): Promise<string[]> {
  return Promise.all(
    sims.map(async (sim) => {
      const client = await InstallerClient.connect({ url: sim!.url, user: USER, password: PASSWORD, trust: { insecure: true } });
      try {
        const { depotConfiguration: c } = await client.getDepotSettings();
        return `${c?.hostname}:${c?.port}`;
      } finally {
        await client.close();
      }
    }),
  );
}

/** A fixture per test, or one for a `describe` whose first tests change nothing. */
function depotByName(each: boolean) {
  const at = { named: '' } as { tmp: { dir: string; cleanup: () => Promise<void> }; fx: MoveFixture; named: string };
  (each ? beforeEach : beforeAll)(async () => {
    await expect(lookup(DEPOT_NAME)).rejects.toThrow();
    at.tmp = await tempDir('depotkit-ca-move-by-name-');
    at.fx = await moveFixture(at.tmp.dir, CONSUMERS, { depotName: DEPOT_NAME });
    at.named = `${DEPOT_NAME}:${at.fx.serve.info.port}`;
  }, 120_000);
  (each ? afterEach : afterAll)(async () => {
    await at.fx?.close();
    await at.tmp?.cleanup();
  });
  return at;
}

describe('moving a depot the consumers know by a name this host does not resolve', () => {
  // The refusal changes nothing: the move by address comes after it, on the same depot and consumers.
  const at = depotByName(false);
  it('the name without `asHost`: the plan says it does not resolve here and names `asHost`; the move stops before any consumer is asked', async () => {
    const dry = await moveDepotCa(options(at.fx, { depot: depotSpec(at.fx.depotUrl), asHost: undefined, dryRun: true }));
    expect(dry.ok).toBe(false);
    const finding = dry.plan.findings.find((f) => f.id === 'net.unknown-host');
    expect(finding?.message).toMatch(new RegExp(`^${DEPOT_NAME.replaceAll('.', '\\.')} does not resolve here`));
    expect(finding?.fix).toContain(`\`asHost\` ${DEPOT_NAME}`);

    const logged = at.fx.sims.map((sim) => sim!.logs.length);
    const refused = await moveDepotCa(options(at.fx, { depot: depotSpec(at.fx.depotUrl), asHost: undefined })).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DepotkitError);
    expect((refused as DepotkitError).exitCode).toBe(EXIT.problems);
    expect((refused as DepotkitError).message).toContain(`${DEPOT_NAME} does not resolve here`);
    expect(at.fx.sims.map((sim, i) => sim!.logs.length - logged[i]!)).toEqual(at.fx.sims.map(() => 0));
  }, 120_000);

  it('reaches the depot by address with `asHost`: zero failed validations on 9.0.x, 9.1.0 and 9.1.1, the consumers keep the name, the old CA retired', async () => {
    expect(await depotHosts(at.fx.sims)).toEqual(at.fx.sims.map(() => at.named));
    const { result: report, tally } = await whileValidating(at.fx, () => moveDepotCa(options(at.fx, { removeOld: true })));
    expect(tally.failed).toEqual([]);
    expect(tally.perConsumer.every((n) => n >= 1)).toBe(true);
    expect(report.phases.map((p) => p.phase)).toEqual(MOVE_PHASES);
    expect(report.phases.every((p) => p.ok)).toBe(true);
    expect(report.plan).toMatchObject({ depotUrl: `https://${at.named}`, reachedAt: at.fx.addressUrl });
    const revalidated = report.phases.find((p) => p.phase === 'revalidate')!.rows!;
    expect(new Set(revalidated.map((r) => r.version?.slice(0, 5)))).toEqual(new Set(['9.0.2', '9.1.0', '9.1.1']));
    // The certificate the consumers are shown, read as they read it: by their name for the depot.
    expect(await servedLeafSha256(at.fx.addressUrl, 5000, DEPOT_NAME)).toBe(report.plan.leaf.sha256);
    expect(await depotHosts(at.fx.sims)).toEqual(at.fx.sims.map(() => at.named));
    for (const sim of at.fx.sims) {
      expect(await holds(sim!, at.fx.newCa.certPem)).toBe(true);
      expect(await holds(sim!, at.fx.oldCa.certPem)).toBe(false);
    }
  }, 240_000);
});

describe('moving a depot known by a name: the command line, and the address given without `asHost`', () => {
  const at = depotByName(true);
  it('through the command line, --depot-url the address and --as-host the name: zero failed validations, every consumer still on the name', async () => {
    const inventory = join(at.tmp.dir, 'consumers.yaml');
    const entries = at.fx.targets.map((t) => `  - { name: ${t.name}, url: "${t.url}", passwordEnv: ${PASSWORD_ENV}, insecure: true }`);
    await writeFile(inventory, `installers:\n${entries.join('\n')}\n`);
    const { result: moved, tally } = await whileValidating(at.fx, () =>
      runCli(
        [
          ...['depot', 'move-ca', '--cert', at.fx.files.newCert, '--key', at.fx.files.newKey, '--new-ca', at.fx.files.newCa, '--old-ca', at.fx.files.oldCa],
          ...['--served-cert', at.fx.files.served.cert, '--served-key', at.fx.files.served.key, '--serve-pid', String(at.fx.serve.info.pid)],
          ...['--depot-url', at.fx.addressUrl, '--as-host', DEPOT_NAME, '--depot-user', DEPOT_USER, '--depot-password-env', DEPOT_PASSWORD_ENV],
          ...['--inventory', inventory, '--remove-old', '--json'],
        ],
        { env: { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD } },
      ),
    );
    expect(moved.code, moved.stderr).toBe(0);
    expect(tally.failed).toEqual([]);
    expect(tally.perConsumer.every((n) => n >= 1)).toBe(true);
    const report = JSON.parse(moved.stdout) as CaMoveReport;
    expect(report.plan).toMatchObject({ depotUrl: `https://${at.named}`, reachedAt: at.fx.addressUrl });
    expect(report.phases.map((p) => [p.phase, p.ok])).toEqual(MOVE_PHASES.map((phase) => [phase, true]));
    expect(await depotHosts(at.fx.sims)).toEqual(at.fx.sims.map(() => at.named));
  }, 240_000);

  it('the address without `asHost` would point the consumers at it: every row refused, nothing switched, their depot unchanged; `repoint` points them there when asked', async () => {
    const refused = await moveDepotCa(options(at.fx, { asHost: undefined }));
    expect(refused.ok).toBe(false);
    expect(refused.phases.map((p) => p.phase)).toEqual(['plan', 'import', 'prove']);
    for (const row of refused.phases.find((p) => p.phase === 'import')!.rows!) {
      expect(row.ok).toBe(false);
      expect(row.error?.message).toBe(
        `The consumer is set to the depot at ${at.named}, not 127.0.0.1:${at.fx.serve.info.port}: the move would point it elsewhere, so nothing was sent.`,
      );
      expect(row.error?.fix).toContain(`\`asHost\` ${DEPOT_NAME}`);
    }
    expect(await servedLeafSha256(at.fx.addressUrl, 5000)).not.toBe(refused.plan.leaf.sha256);
    expect(await depotHosts(at.fx.sims)).toEqual(at.fx.sims.map(() => at.named));
    expect(await holds(at.fx.sims[0]!, at.fx.newCa.certPem)).toBe(false);

    const repointed = await moveDepotCa(options(at.fx, { asHost: undefined, repoint: true }));
    expect(repointed.ok).toBe(true);
    expect(await depotHosts(at.fx.sims)).toEqual(at.fx.sims.map(() => `127.0.0.1:${at.fx.serve.info.port}`));
  }, 240_000);
});
