import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from '../../src/constants.js';
import { pruneDepot } from '../../src/transfer/prune.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { demo, treeOf } from './helpers.js';
import { outcome, packIn, pruneText, unpackIn as unpack, unpackText } from './in-process.js';
import { deadPid } from '../helpers/process.js';

let base: string;
let cleanup: () => Promise<void>;
let depot: string;
let packDir: string;
let n = 0;
const fresh = (name: string) => join(base, `${name}-${n++}`);

beforeAll(async () => {
  ({ dir: base, cleanup } = await tempDir('depotkit-unpack-lock-'));
  depot = await demo(join(base, 'depot'), 16 * 1024);
  packDir = join(base, 'pack');
  expect((await packIn(depot, packDir)).code).toBe(0);
});
afterAll(() => cleanup());

/** Writes the depot's lock as a run of `pid` on this machine would. */
async function lockAs(root: string, pid: number, operation: string): Promise<void> {
  await mkdir(join(root, '.depotkit'), { recursive: true });
  await writeFile(join(root, '.depotkit', 'lock'), `${JSON.stringify({ pid, host: hostname(), operation, startedAt: '2025-01-01T00:00:00.000Z' })}\n`);
}

describe('one writer per depot: unpack and prune --yes hold its lock', () => {
  it('refuses to unpack into a depot another run is writing (exit 2, naming it), and takes over a lock its dead holder left, saying so', async () => {
    const busy = fresh('busy');
    await lockAs(busy, process.pid, 'depot mirror');
    const refused = await unpack([packDir], busy);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`is being written by another run: depot mirror (process ${process.pid} on ${hostname()}`);
    expect(existsSync(join(busy, 'PROD'))).toBe(false);

    const left = fresh('left');
    const pid = await deadPid();
    await lockAs(left, pid, 'depot unpack');
    const { code, report } = await unpack([packDir], left);
    expect(code).toBe(0);
    expect(report.lock.tookOverFrom).toMatchObject({ pid, operation: 'depot unpack' });
    expect(await treeOf(left)).toEqual(await treeOf(depot));
    // Released at the end.
    expect(existsSync(join(left, '.depotkit', 'lock'))).toBe(false);
    const again = await unpack([packDir], left);
    expect(unpackText(again.report)).not.toContain("The depot's lock was left");
  });

  it("prune --yes removes nothing while another run writes the depot (its temporary files are that run's), and says when it took a dead run's lock", async () => {
    const site = fresh('site');
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
