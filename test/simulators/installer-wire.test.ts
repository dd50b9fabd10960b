import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INSTALLER_API } from '../../src/constants.js';
import { REPO_ROOT } from '../helpers/temp.js';
import { withSim } from '../helpers/installer-sim.js';
import { call, login } from '../installer/helpers.js';
import { closedPort } from '../helpers/ports.js';

const DEPOT = INSTALLER_API.depotSettings;
const V9_0 = '9.0.2.0.24000000';
const V9_1_0 = '9.1.0.0.25368698';
const V9_1_1 = '9.1.1.0.25500000';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)])));
  return nested.flat().filter((f) => f.endsWith('.ts'));
}

describe('the installer simulator reads the wire on its own', () => {
  it('imports nothing of the installer client: a misreading there is not mirrored here', async () => {
    const dir = join(REPO_ROOT, 'src', 'simulators', 'installer');
    const clientImports: string[] = [];
    for (const file of await sourceFiles(dir)) {
      const text = await readFile(file, 'utf8');
      for (const [, spec] of text.matchAll(/from '([^']+)'/g)) {
        const target = relative(join(REPO_ROOT, 'src'), join(file, '..', spec!));
        if (target.startsWith('installer/') || target === 'installer') clientImports.push(`${relative(REPO_ROOT, file)}: ${spec}`);
      }
    }
    expect(clientImports).toEqual([]);
  });

  it('refuses a depot url longer than the 2048 characters the 9.1 API allows, before any connection', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const url = `https://127.0.0.1:${await closedPort()}/${'d'.repeat(2100)}`;
        const reply = await call(sim, 'PUT', DEPOT, { token: accessToken, body: { depotConfiguration: { isOfflineDepot: true, url } } });
        expect(reply.status).toBe(400);
        expect(reply.body).toMatchObject({ errorCode: 'INVALID_DEPOT_SETTINGS', message: expect.stringMatching(/at most 2048 characters/) });
        expect(sim.logs.join('\n')).not.toMatch(/Depot validation failed/);
      },
      { version: V9_1_0 },
    );
  });

  it('reads the 9.0 shape sent to a 9.1.1 appliance as hostname and port, coercing its scalars and ignoring a field the API does not have', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const port = await closedPort();
        const body = {
          offlineAccount: { username: 'depot', password: 'secret' },
          depotConfiguration: { isOfflineDepot: 'true', hostname: '127.0.0.1', port: String(port), sslThumbprint: 'AA:BB' },
        };
        const reply = await call(sim, 'PUT', DEPOT, { token: accessToken, body });
        expect(reply.body).toMatchObject({ errorCode: 'DEPOT_NOT_AVAILABLE' });
        const shown = await call(sim, 'GET', DEPOT, { token: accessToken });
        expect(shown.body).toEqual({
          offlineAccount: { username: 'depot', status: 'DEPOT_NOT_AVAILABLE', message: expect.any(String) },
          depotConfiguration: { isOfflineDepot: true, hostname: '127.0.0.1', port },
        });
      },
      { version: V9_1_1 },
    );
  });

  it('ignores the 9.1.1 trustedCertificates field on 9.1.0 (an unknown field there) and reads it on 9.1.1', async () => {
    const port = await closedPort();
    const body = {
      offlineAccount: { username: 'depot', password: 'secret' },
      depotConfiguration: { isOfflineDepot: true, hostname: '127.0.0.1', port, trustedCertificates: ['not a certificate'] },
    };
    const answers: Record<string, unknown> = {};
    for (const version of [V9_1_0, V9_1_1]) {
      await withSim(
        async (sim) => {
          const { accessToken } = await login(sim);
          answers[version] = (await call(sim, 'PUT', DEPOT, { token: accessToken, body })).body;
        },
        { version },
      );
    }
    expect(answers[V9_1_0]).toMatchObject({ errorCode: 'DEPOT_NOT_AVAILABLE' });
    expect(answers[V9_1_1]).toMatchObject({ errorCode: 'INVALID_DEPOT_SETTINGS', message: expect.stringMatching(/trustedCertificates/) });
  });

  it('ignores the 9.1 url field on 9.0, where hostname and port are required', async () => {
    await withSim(
      async (sim) => {
        const { accessToken } = await login(sim);
        const url = `https://127.0.0.1:${await closedPort()}/`;
        const reply = await call(sim, 'PUT', DEPOT, { token: accessToken, body: { depotConfiguration: { isOfflineDepot: true, url } } });
        expect(reply.status).toBe(400);
        expect(reply.body).toMatchObject({ errorCode: 'INVALID_DEPOT_SETTINGS', message: 'depotConfiguration.hostname is required.' });
      },
      { version: V9_0 },
    );
  });
});
