import type { Socket } from 'node:net';
import type { Finding } from '../util/findings.js';
import type { Credentials } from './answers.js';
import { basicAuthorization } from '../net/index.js';
import type { CredentialTrust } from './http.js';
import type { DepotUrl } from '../util/depot-url.js';

/** Where the check connects: the depot, the address it resolved to, the host name the installer uses. */
export interface Target {
  depot: DepotUrl;
  address: string;
  hostName: string;
  timeoutMs: number;
  /** The TCP connection the check opened first, which the first handshake takes over. */
  connection?: Socket;
}

/** What the TLS or plain-HTTP stage leaves: whether the check goes on, and whether the password may be sent. */
export interface TrustStage {
  stop: boolean;
  /** Present when the credentials may go to this server. */
  trust?: CredentialTrust;
  /** Why they may not, for the auth.withheld finding. */
  withheldBecause?: string;
}

/** The credentials the check sends after the trust stage; a password that may not go is withheld, and said so. */
export function credentialsFor(depot: DepotUrl, user: string | undefined, password: string | undefined, stage: TrustStage, findings: Finding[]): Credentials {
  const withheld = user !== undefined && stage.trust === undefined;
  if (withheld) {
    findings.push({
      id: 'auth.withheld',
      severity: 'warning',
      message: `The password of user "${user}" was not sent: ${stage.withheldBecause}. Only what answers without credentials was checked.`,
      fix: depot.https
        ? "Fix the TLS findings (pass `caPems` with the CA that issued the depot's certificate, and `asHost` with the name the installer uses); the check then sends the credentials."
        : 'Serve the depot over HTTPS (`serveDepot` <dir> `caDir` <ca-dir>); to send the password over HTTP anyway, pass `allowHttpCredentials`.',
    });
  }
  return { user, header: user !== undefined && !withheld ? basicAuthorization(user, password ?? '') : undefined, withheld };
}
