import { describe, expect, it } from 'vitest';
import { connectDepot } from '../../src/installer/index.js';
import { DEPOT_PASSWORD, DEPOT_USER, withClient, type TestDepot } from './helpers.js';
import { useTestDepot } from '../helpers/installer-sim.js';

let depot: TestDepot;
useTestDepot('depotkit-installer-connect-', (started) => ({ depot } = started));

describe('connectDepot', () => {
  it("trusts the depot's CA, sets the depot and syncs it, each step reported; a re-run finds each step done", async () => {
    await withClient(async (client) => {
      const spec = { url: `https://localhost:${depot.port}`, username: DEPOT_USER, password: DEPOT_PASSWORD };
      const options = { caPems: [depot.ca.certPem], pollMs: 50, syncPollMs: 50 };
      const first = await connectDepot(client, spec, options);
      expect(first).toMatchObject({
        ok: true,
        trusted: [{ action: 'imported' }],
        push: { action: 'updated', ok: true, status: 'DEPOT_CONNECTION_SUCCESSFUL' },
        sync: { action: 'synced', ok: true, status: 'SYNCED' },
      });
      const again = await connectDepot(client, spec, options);
      expect(again).toMatchObject({
        ok: true,
        trusted: [{ action: 'already-trusted' }],
        push: { action: 'unchanged', ok: true },
        sync: { action: 'already-synced', ok: true },
      });
      // Without a sync asked for, and with no CA given, those steps are absent from the report.
      const bare = await connectDepot(client, spec, { sync: false, force: true, pollMs: 50 });
      expect(bare.ok).toBe(true);
      expect(bare.push.action).toBe('updated');
      expect(bare).not.toHaveProperty('trusted');
      expect(bare).not.toHaveProperty('sync');
    });
  });

  it('does not sync a depot the installer refuses, and the connection is not ok', async () => {
    await withClient(async (client) => {
      // The depot's CA is not trusted: the installer keeps the attempt with a failed status.
      const refused = await connectDepot(client, { hostname: depot.host, port: depot.port, username: DEPOT_USER, password: DEPOT_PASSWORD }, { pollMs: 50 });
      expect(refused.ok).toBe(false);
      expect(refused.push).toMatchObject({ ok: false, errorCode: 'VMWARE_DEPOT_CONNECT_FAILURE' });
      expect(refused).not.toHaveProperty('sync');
      expect((await client.getSyncInfo()).syncStatus).not.toBe('SYNCED');
    });
  });
});
