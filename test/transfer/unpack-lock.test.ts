import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { runCli } from '../helpers/cli.js';
import { demoFixture, treeOf } from './helpers.js';
import { outcome, packIn, pruneText, unpackIn as unpack, unpackText } from './in-process.js';
import { deadPid } from '../helpers/process.js';

let packDir: string;

const fx = demoFixture('depotkit-unpack-lock-', 16 * 1024);

beforeAll(async () => {
  packDir = join(fx.base, 'pack');
  expect((await packIn(fx.depot, packDir)).code).toBe(0);
});

/** Writes the depot's lock as a run of `pid` on this machine would. */
async function lockAs(root: string, pid: number, operation: string): Promise<void> {
  await mkdir(join(root, '.depotkit'), { recursive: true });
  await writeFile(join(root, '.depotkit', 'lock'), `${JSON.stringify({ pid, host: hostname(), operation, startedAt: '2025-01-01T00:00:00.000Z' })}\n`);
}

describe('one writer per depot: unpack and prune --yes hold its lock', () => {
  it('refuses to unpack into a depot another run is writing (exit 2, naming it), and takes over a lock its dead holder left, saying so', async () => {
    const busy = fx.fresh('busy');
    await lockAs(busy, process.pid, 'depot mirror');
    const refused = await unpack([packDir], busy);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`is being written by another run: depot mirror (process ${process.pid} on ${hostname()}`);
    expect(existsSync(join(busy, 'PROD'))).toBe(false);

    const left = fx.fresh('left');
    const pid = await deadPid();
    await lockAs(left, pid, 'depot unpack');
    const { code, report } = await unpack([packDir], left);
    expect(code).toBe(0);
    expect(report.lock.tookOverFrom).toMatchObject({ pid, operation: 'depot unpack' });
    expect(await treeOf(left)).toEqual(await treeOf(fx.depot));
    // Released at the end.
    expect(existsSync(join(left, '.depotkit', 'lock'))).toBe(false);
    const again = await unpack([packDir], left);
    expect(unpackText(again.report)).not.toContain("The depot's lock was left");
  });

  it("prune --yes removes nothing while another run writes the depot (its temporary files are that run's), and says when it took a dead run's lock", async () => {
    const site = fx.fresh('site');
    expect((await unpack([packDir], site)).code).toBe(0);
    const temp = join(site, 'PROD', `${TEMP_PREFIX}0123456789ab-vcenter.iso`);
    await writeFile(temp, 'being written by a mirror');
    await lockAs(site, process.pid, 'depot mirror');
    // The command line for this refusal: exit 2 and its sentence; the library for the rest.
    const refused = await runCli(['depot', 'prune', site, '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is being written by another run: depot mirror');
    expect(existsSync(temp)).toBe(true);
    // Listing alone takes no lock.
    expect((await outcome(pruneDepot(site))).code).toBe(0);

    const pid = await deadPid();
    await lockAs(site, pid, 'depot mirror');
    const report = await pruneDepot(site, { yes: true });
    expect(report.lock?.tookOverFrom).toMatchObject({ pid });
    expect(report.candidates.map((c) => c.kind)).toEqual(['temporary']);
    expect(existsSync(temp)).toBe(false);
    await lockAs(site, await deadPid(), 'depot mirror');
    expect(pruneText(await pruneDepot(site, { yes: true }))).toMatch(
      /^The depot's lock was left by depot mirror \(process \d+ on .*\), which is gone: taken over\.$/m,
    );
  });
});
