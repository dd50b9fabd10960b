// The replacement's options and report, apart from the modules that run it: its plan and steps read them
// and the orchestrator (replace.ts) returns them, without importing each other in a circle.
import type { MgmtApiGeneration } from '../constants.js';
import type { Finding } from '../util/findings.js';
import type { ApiChoice } from './client.js';
import type { WaitStatus } from './served.js';
import type { CsrSpec } from './wire.js';

/** Subject fields of the CSR; the server's host name fills CN and SAN by default. */
export interface CsrSubject {
  cn?: string;
  san?: string[];
  organization?: string;
  organizationUnit?: string;
  country?: string;
  state?: string;
  locality?: string;
  email?: string;
}

export interface ReplaceCertOptions {
  server: string;
  user: string;
  password: string;
  /**
   * The toolkit's CA. Its certificate (PEM; an intermediate CA followed by its
   * issuers up to the root) goes out as root_cert and is what the new
   * certificate is verified against; its key signs the CSR (not needed with `custom`).
   */
  ca: { certPem: string; keyPem?: string };
  subject?: CsrSubject;
  /** Key size the server generates; the server's default (3072 on current versions) when absent. */
  keySize?: number;
  /** Validity of the certificate signed for the CSR; 730 days (the server's fixed two years) by default. */
  days?: number;
  api?: ApiChoice;
  /** Trust for the server's current certificate. */
  serverCaPems?: string[];
  insecure?: boolean;
  /** Check and show what would be done; request no CSR, replace nothing. */
  dryRun?: boolean;
  /** A certificate made elsewhere (leaf first, intermediates may follow) and its private key. */
  custom?: { certPem: string; keyPem: string };
  /**
   * Put the CA (with its issuers) into the server's trusted root chains first, as `vcenter trust`
   * does, and send the certificate without root_cert: the way of clients whose TLS spec has none.
   */
  trustedChain?: boolean;
  /** How long to wait for the restarted server to serve the new certificate; 15 minutes by default. */
  waitTimeoutMs?: number;
  pollMs?: number;
  requestTimeoutMs?: number;
  /** Progress: one line per step. */
  onStep?: (step: string) => void;
  onWait?: (status: WaitStatus) => void;
}

export interface CertSummary {
  subject: string;
  issuer: string;
  san: string[];
  notBefore: string;
  notAfter: string;
  sha256: string;
}

export interface ReplaceCertReport {
  server: string;
  api: MgmtApiGeneration;
  mode: 'csr' | 'custom';
  dryRun: boolean;
  /** The certificate served before. */
  previous: CertSummary;
  /** The CSR specification sent (or that would be sent). */
  csrSpec?: CsrSpec;
  /** The certificate installed (or that would be, with `custom`). */
  certificate?: CertSummary;
  /** With `trustedChain`: the server's chains holding the CA, and whether this run added it. */
  trustedChain?: { chains: string[]; changed: boolean };
  /** How long the restart took to show the new certificate; `sawRestart` when the server was seen down. */
  restart?: { waitedMs: number; polls: number; sawRestart: boolean };
  /** The TLS check of the served certificate against the CA and the host name. */
  verified?: { trusted: boolean; hostname: boolean; detail?: string };
  /** Why a dry run would fail, or what went wrong after the restart (ids `mgmt.*`). */
  findings: Finding[];
  ok: boolean;
}
