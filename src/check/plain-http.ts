import { DEPOT_STATUS } from '../constants.js';
import type { Finding } from '../util/findings.js';
import { tlsSnapshot } from './connect.js';
import type { Target, TrustStage } from './credentials.js';

/** An http:// depot: the wrong scheme for a TLS port, or plain HTTP, where the password goes only when allowed. */
export async function plainHttpStage(target: Target, user: string | undefined, allowHttpCredentials: boolean, findings: Finding[]): Promise<TrustStage> {
  const { depot } = target;
  // A TLS port asked in plain HTTP hangs up (Node) or answers 400 (nginx): the URL is wrong, not the server.
  if (await speaksTls(target)) {
    const https = new URL(depot.base.href);
    https.protocol = 'https:';
    findings.push({
      id: 'http.tls-port',
      severity: 'error',
      message: `${depot.host}:${depot.port} speaks TLS: use https://.`,
      installer: `reports ${DEPOT_STATUS.notAvailable} when given http:// for this port`,
      fix: `Give the depot as ${https.href.replace(/\/$/, '')}, here and to the installer.`,
    });
    return { stop: true };
  }
  findings.push({
    id: 'http.plain',
    severity: 'warning',
    message: 'The depot is served over plain HTTP.',
    installer: 'accepts it only through the 9.1 API (the url field of the depot settings); the UI and 9.0 need HTTPS',
    fix: 'Serve it over HTTPS: `serveDepot` <dir> `caDir` <ca-dir>.',
  });
  if (user !== undefined && allowHttpCredentials) {
    findings.push({
      id: 'auth.cleartext',
      severity: 'warning',
      message: 'The Basic credentials crossed the network in clear text over HTTP (`allowHttpCredentials`).',
      fix: 'Use HTTPS when the depot needs a password.',
    });
    return { stop: false, trust: 'plain-http' };
  }
  return { stop: false, withheldBecause: 'the depot is served over plain HTTP, where Basic credentials cross the network in clear text' };
}

function speaksTls({ depot, address, hostName, timeoutMs, connection }: Target): Promise<boolean> {
  return tlsSnapshot(depot, address, hostName, timeoutMs, connection).then(
    () => true,
    () => false,
  );
}
