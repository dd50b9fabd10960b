import { INSTALLER_SIM_ERROR_CODES } from '../literals.js';
import { ApiError } from '../api-error.js';
import type { InstallerSimContext } from '../context.js';
import type { DepotConnection } from '../downloads.js';
import { targetOf } from '../lifecycle.js';

/** Where and how the installer reaches its configured depot now; refused when there is none. */
export function currentConnection(ctx: InstallerSimContext): DepotConnection {
  const depot = ctx.depot.current;
  if (!depot) throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.depotNotConfigured, 'No offline depot is configured: update the depot settings first.');
  return {
    target: targetOf(depot),
    account: { username: depot.username, password: ctx.depot.password },
    trustedPems: [...ctx.trust.outboundPems(), ...(depot.trustedCertificates ?? [])],
    options: { timeoutMs: ctx.depotTimeoutMs, resolve: ctx.resolve, tls: ctx.depotTls },
  };
}
