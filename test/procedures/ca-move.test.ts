import { afterEach, describe, expect, it } from 'vitest';
import { INSTALLER_API } from '../../src/constants.js';
import { moveDepotCa, servedLeafSha256 } from '../../src/procedures/index.js';
import { tempDir } from '../helpers/temp.js';
import { MOVE_PHASES, holds, moveFixture, serveMoveOptions, whileValidating, type MoveFixture } from './ca-move-fixture.js';

const CONSUMERS = 20;
/** The refusal and the re-run: enough consumers for each version and role, and one down among them. */
const FEW_CONSUMERS = 8;

const options = serveMoveOptions;

describe('moving a served depot to another CA', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let fx: MoveFixture | undefined;
  async function fixture(consumers: number): Promise<MoveFixture> {
    tmp = await tempDir('depotkit-ca-move-');
    fx = await moveFixture(tmp.dir, consumers, { restartable: true });
    return fx;
  }
  afterEach(async () => {
    await fx?.close();
    await tmp?.cleanup();
    fx = tmp = undefined;
  });

  it('switches serve to the new CA while 20 consumers validate the depot every 200 ms, with zero failed validations, and removes the old CA', async () => {
    const fx = await fixture(CONSUMERS);
    const { result: report, tally } = await whileValidating(fx, () => moveDepotCa(options(fx, { removeOld: true })));
    expect(tally.failed).toEqual([]);
    expect(tally.perConsumer.every((n) => n >= 1)).toBe(true);
    console.log(`validations during the move: ${tally.ok} ok, ${tally.failed.length} failed`);
    expect(report.phases.map((p) => [p.phase, p.ok])).toEqual(MOVE_PHASES.map((phase) => [phase, true]));
    expect(report.ok).toBe(true);
    expect(await servedLeafSha256(fx.depotUrl, 5000)).toBe(report.plan.leaf.sha256);
    const revalidated = report.phases.find((p) => p.phase === 'revalidate')!.rows!;
    expect(revalidated).toHaveLength(CONSUMERS);
    expect(new Set(revalidated.map((r) => r.role))).toEqual(new Set(['VcfInstaller', 'SddcManager']));
    expect(new Set(revalidated.map((r) => r.version?.slice(0, 5)))).toEqual(new Set(['9.0.2', '9.1.0', '9.1.1']));
    for (const sim of fx.sims) {
      expect(await holds(sim!, fx.newCa.certPem)).toBe(true);
      expect(await holds(sim!, fx.oldCa.certPem)).toBe(false);
    }
  }, 240_000);

  it('refuses the switch while a consumer is down, breaks nothing, and a re-run after it comes back completes', async () => {
    const fx = await fixture(FEW_CONSUMERS);
    await fx.sims[5]!.close();
    fx.sims[5] = undefined;
    const { result: first, tally } = await whileValidating(fx, () => moveDepotCa(options(fx)));
    expect(first.ok).toBe(false);
    expect(first.phases.map((p) => p.phase)).toEqual(['plan', 'import', 'prove']);
    const down = first.phases.find((p) => p.phase === 'prove')!.rows!.find((r) => r.name === 'consumer-5')!;
    expect(down).toMatchObject({ ok: false, unreachable: true });
    expect(first.next).toMatch(/not switched/);
    expect(tally.failed).toEqual([]);
    // Nothing broken: the old certificate is still served and every running consumer still trusts the old CA.
    expect(await servedLeafSha256(fx.depotUrl, 5000)).not.toBe(first.plan.leaf.sha256);
    for (const sim of fx.sims) if (sim) expect(await holds(sim, fx.oldCa.certPem)).toBe(true);

    await fx.startConsumer(5);
    const logged = fx.sims.map((sim) => sim!.logs.length);
    const second = await moveDepotCa(options(fx));
    expect(second.ok).toBe(true);
    // One session per consumer for the whole move: one log-in, one revocation, appliance-info read once, whatever the phases.
    const calls = (i: number, call: string) => fx.sims[i]!.logs.slice(logged[i]).filter((line) => line.includes(` ${call} 2`)).length;
    for (let i = 0; i < FEW_CONSUMERS; i++) {
      expect([
        calls(i, `POST ${INSTALLER_API.tokens}`),
        calls(i, `DELETE ${INSTALLER_API.refreshToken}`),
        calls(i, `GET ${INSTALLER_API.applianceInfo}`),
      ]).toEqual([1, 1, 1]);
    }
    expect(second.resumed).toBe(true);
    expect(second.phases.find((p) => p.phase === 'revalidate')!.rows).toHaveLength(FEW_CONSUMERS);
    expect(await servedLeafSha256(fx.depotUrl, 5000)).toBe(second.plan.leaf.sha256);
  }, 240_000);
});
