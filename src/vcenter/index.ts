// Management server: replacing its machine TLS certificate through its API.
export { MgmtClient, MgmtApiError, API_CHOICES, parseServerUrl, type ApiChoice, type MgmtClientOptions, type MgmtTrust } from './client.js';
export { replaceCertificate, csrSpec, type ReplaceCertOptions, type ReplaceCertReport, type CertSummary, type CsrSubject } from './replace.js';
export { handshake, waitForCertificate, type Handshake, type WaitStatus } from './served.js';
export { hostOf } from '../util/url.js';
export { parseErrorBody, type CsrSpec, type TlsInfo, type TlsReplaceSpec, type MgmtMessage } from './wire.js';
export {
  trustVcenterCa,
  listVcenterTrust,
  untrustVcenterCa,
  type VcenterTrustOptions,
  type TrustReport,
  type TrustListReport,
  type ChainCertificate,
} from './trust.js';
export {
  connectVcenterDepot,
  syncAndWait,
  listedComponents,
  syncProblem,
  type VcenterDepotOptions,
  type VcenterDepotReport,
  type ListedComponent,
} from './depot.js';
