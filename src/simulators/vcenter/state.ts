import type { MgmtApiGeneration } from '../../constants.js';
import type { ServedCertificate } from './certs.js';
import type { SessionStore } from './sessions.js';
import type { TrustedChains } from './trusted-chains.js';
import type { VlcmDepots } from './vlcm-state.js';

/** What the simulated server holds, shared by its route modules (a module of its own, so that they need not import the app). */
export interface MgmtState {
  hostname: string;
  /** The appliance's version, as `GET /api/appliance/system/version` names it. */
  version: string;
  users: Readonly<Record<string, string>>;
  generations: readonly MgmtApiGeneration[];
  sessions: SessionStore;
  current: ServedCertificate;
  /** The key of the last CSR, kept for the certificate that comes back signed. */
  pendingKeyPem?: string;
  /** The trusted root chains: the first self-signed certificate, those added, those a root_cert published. */
  chains: TrustedChains;
  /** vLCM's depots, their synced content and tasks (fetched through `chains`). */
  vlcm: VlcmDepots;
  /**
   * Called while a successful replace is answered (so that a client told of the success finds the
   * restart under way); `answered` settles once the response has gone out.
   */
  onReplaced(answered: Promise<void>): void;
}
