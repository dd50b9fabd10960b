// A fleet-sized run (CI runs it once, on Node 20): many stopped consumers among a few live ones.
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { INSTALLER_DEFAULTS } from '../../src/installer/defaults.js';
import type { InstallerTarget } from '../../src/installer/inventory.js';
import { FleetSession } from '../../src/installer/session.js';
import { selfSignedServerCertificate } from '../../src/cert/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';

const USER = 'admin@local';
const PASSWORD = 'Fleet-Scale-1!';
const REFUSED = 2_000;

/** Free to listen on means nothing listens there. */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports nothing listens on: from a block below the ephemeral range, so that no connection of the run lands on one. */
async function closedPorts(n: number): Promise<number[]> {
  const block = Array.from({ length: n + 500 }, (_, i) => 21_000 + i);
  const isFree = await Promise.all(block.map(free));
  const ports = block.filter((_, i) => isFree[i]).slice(0, n);
  expect(ports).toHaveLength(n);
  return ports;
}

describe('a fleet of 2,000 stopped consumers and 4 live ones', () => {
  const sims: InstallerSimulator[] = [];
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it('reports every row with the default concurrency: the stopped ones refused at once, the live ones read', async () => {
    const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 30);
    for (let i = 0; i < 4; i++) sims.push(await startInstallerSimulator({ users: { [USER]: PASSWORD }, tls }));
    const ports = await closedPorts(REFUSED);
    const targets: InstallerTarget[] = ports.map((port, i) => ({ name: `gone-${i}`, url: `https://127.0.0.1:${port}`, user: USER, insecure: true }));
    // The live ones spread through the list, as in a real inventory.
    sims.forEach((sim, i) => targets.splice(i * 500 + 250, 0, { name: `live-${i}`, url: sim.url, user: USER, insecure: true }));
    const session = new FleetSession(targets, { concurrency: INSTALLER_DEFAULTS.concurrency, timeoutMs: 30_000, prompt: async () => PASSWORD });
    await session.resolvePasswords();
    let finished = 0;
    const rows = await session.run(
      async (client) => ({ ok: true, result: (await client.listTrusted()).elements.length }),
      () => finished++,
    );
    expect(finished).toBe(targets.length);
    expect(rows.map((r) => r.name)).toEqual(targets.map((t) => t.name));
    const live = rows.filter((r) => r.name.startsWith('live-'));
    expect(live.map((r) => [r.ok, r.role])).toEqual(sims.map(() => [true, 'VcfInstaller']));
    const gone = rows.filter((r) => r.name.startsWith('gone-'));
    expect(gone).toHaveLength(REFUSED);
    expect(gone.filter((r) => r.ok || !r.error?.message.endsWith('the connection was refused (ECONNREFUSED).'))).toEqual([]);
  }, 120_000);
});
