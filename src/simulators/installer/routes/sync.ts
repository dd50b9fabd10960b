import type express from 'express';
import { INSTALLER_API, INSTALLER_JWT } from '../../../constants.js';
import type { Authorize } from '../authorize.js';
import { stableId } from '../bundles.js';
import type { InstallerSimContext } from '../context.js';
import { currentConnection } from './connection.js';

/** Syncing the depot's metadata, and the machine id the depot sees. */
export function registerSyncRoutes(app: express.Express, ctx: InstallerSimContext, authorize: Authorize): void {
  app.get(INSTALLER_API.depotSyncInfo, async (req, res) => {
    await authorize(req);
    res.status(200).json(ctx.lifecycle.syncInfo);
  });

  app.patch(INSTALLER_API.depotSyncInfo, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    res.status(202).json(ctx.lifecycle.startSync(currentConnection(ctx)));
  });

  app.get(INSTALLER_API.depotMachineDetails, async (req, res) => {
    await authorize(req);
    // Stable for the life of the simulator's state: derived from its token secret.
    res.status(200).json({ machineId: stableId(`machine ${ctx.tokens.secretHex}`) });
  });
}
