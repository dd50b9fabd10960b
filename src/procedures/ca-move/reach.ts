import { resolveAndConnect } from '../../check/connect.js';
import { connectFinding } from '../../check/network.js';
import { parseDepotUrl, withInstallerHost } from '../../util/depot-url.js';
import type { Finding } from '../../util/findings.js';
import type { CaMoveOptions, CaMovePlan } from './types.js';
import { hostOf } from '../../util/url.js';

/**
 * Where this host reaches the depot: its origin, and the name the consumers use, which it sends as the
 * TLS server name, so that it reads the certificate the consumers are shown.
 */
export interface DepotReach {
  origin: string;
  serverName: string;
}

/**
 * The depot URL the consumers are given: `depotUrl` as it is, or, with `asHost` (the depot reached here by
 * address, as `check` reaches it), the same URL with the consumers' host name.
 */
export function consumersDepotUrl(opts: Pick<CaMoveOptions, 'depot' | 'asHost'>): URL {
  return withInstallerHost(new URL(opts.depot.url!), opts.asHost);
}

export function reachOf(plan: Pick<CaMovePlan, 'depotUrl' | 'reachedAt'>): DepotReach {
  return { origin: plan.reachedAt ?? plan.depotUrl, serverName: hostOf(new URL(plan.depotUrl)) };
}

/** The depot as a sentence names it: its address, and the consumers' name for it when that differs. */
export function reachText(reach: DepotReach): string {
  return hostOf(new URL(reach.origin)) === reach.serverName ? reach.origin : `${reach.origin} as ${reach.serverName}`;
}

/**
 * Whether this host reaches the depot, as `check`'s first step finds out (the name resolved, a TCP
 * connection opened): a finding when it does not. A name that does not resolve here is an error: the
 * move could never read the certificate the depot serves, before the import or after the switch. A
 * depot that does not answer now is a warning: it may be stopped while the new CA is imported (a
 * 9.1.1 consumer's import then fails its row), and started before the switch.
 */
export async function reachFinding(reach: DepotReach, timeoutMs: number): Promise<Finding | undefined> {
  const { url } = parseDepotUrl(reach.origin);
  const connected = await resolveAndConnect(url, timeoutMs);
  if (connected.ok) {
    connected.socket.destroy();
    return undefined;
  }
  // What the consumers report is theirs to say: the name may resolve there and not here.
  const { installer: _installer, ...finding } = connectFinding(url, connected);
  if (connected.reason !== 'unknown-host') return { ...finding, severity: 'warning' };
  return {
    ...finding,
    message: `${url.host} does not resolve here (${connected.detail}): the move reads the certificate the depot serves before and after the switch.`,
    fix: `Give \`depotUrl\` with the depot's address as this host reaches it, and \`asHost\` ${url.host}: the consumers keep ${url.host}.`,
  };
}
