import { DEPOT_STATUS } from '../constants.js';
import type { Finding } from '../util/findings.js';
import type { ConnectOutcome } from './connect.js';
import type { DepotUrl } from '../util/depot-url.js';

/** What a failed DNS lookup or TCP connection means to the installer, and what to do. */
export function connectFinding(depot: DepotUrl, failure: Extract<ConnectOutcome, { ok: false }>): Finding {
  const where = `${depot.host}:${depot.port}`;
  const { detail } = failure;
  switch (failure.reason) {
    case 'unknown-host':
      return {
        id: 'net.unknown-host',
        severity: 'error',
        message: `${depot.host} does not resolve (${detail}).`,
        installer: `reports ${DEPOT_STATUS.unknownHost}`,
        fix: `Add ${depot.host} to DNS or to the installer's /etc/hosts, or use the name that resolves. When only the installer resolves it, check by address with \`asHost\` ${depot.host} (the URL with the depot's IP; TLS names are then checked against ${depot.host}).`,
      };
    case 'refused':
      return {
        id: 'net.refused',
        severity: 'error',
        message: `${where} refused the connection: nothing listens there.`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Start the server (`serveDepot`) or fix the port in the URL.',
      };
    case 'timeout':
      return {
        id: 'net.timeout',
        severity: 'error',
        message: `${where} did not answer (${detail}).`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Check firewalls between the installer and the depot, and the address.',
      };
    default:
      return {
        id: 'net.unreachable',
        severity: 'error',
        message: `${where} cannot be reached: ${detail}.`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Check the address and the routes.',
      };
  }
}
