import { lintServerCertificate, readCertificate, sha256Fingerprint } from '../cert/index.js';
import { DepotkitError, errorMessage } from '../util/errors.js';
import type { Finding } from '../util/findings.js';
import { TLS_REJECTION } from './answers.js';
import { type TlsSnapshot, tlsSnapshot } from './connect.js';
import type { Target, TrustStage } from './credentials.js';
import { caExpiryFindings } from './expiry.js';
import { leafGivenAsCa } from './given-ca.js';
import { sanPairFindings } from './san-pair.js';

/** What the check's TLS stage reports of the server's certificate. */
export interface TlsSummary {
  protocol: string | null;
  cipher: string;
  subject: string;
  issuer: string;
  dnsNames: string[];
  ipAddresses: string[];
  sha256: string;
}

/** What the TLS stage needs of the check's options. */
interface TlsJudging {
  caPems?: string[];
  now?: Date;
}

/**
 * The handshake, judged only against the given CAs, as the installer's own store; the password goes
 * only to a server the installer would trust: anything else may be someone else's.
 */
export async function tlsStage(target: Target, judging: TlsJudging, findings: Finding[], onSummary: (tls: TlsSummary) => void): Promise<TrustStage> {
  let stage: Finding[];
  let leaf: string;
  try {
    const snapshot = await tlsSnapshot(target.depot, target.address, target.hostName, target.timeoutMs, target.connection);
    const first = snapshot.chainPems[0];
    if (!first) throw new Error('the server sent no certificate');
    leaf = first;
    onSummary(summary(snapshot, leaf));
    stage = judgeChain(snapshot.chainPems, {
      ...judging,
      hostName: target.hostName,
      address: target.address,
      protocol: snapshot.protocol,
      publicRoot: snapshot.publicRoot,
    });
    findings.push(...stage);
  } catch (err) {
    if (err instanceof DepotkitError) throw err;
    findings.push({
      id: 'tls.handshake-failed',
      severity: 'error',
      message: `The TLS handshake with ${target.depot.host}:${target.depot.port} failed: ${errorMessage(err)}.`,
      installer: TLS_REJECTION,
      fix: 'Check that the server speaks TLS 1.2 or 1.3 on this port (is it plain HTTP?).',
    });
    return { stop: true };
  }
  const failed = [...new Set(stage.filter((f) => f.severity === 'error').map((f) => f.id))];
  if (failed.length === 0) return { stop: false, trust: { caPems: judging.caPems ?? [], leafSha256: sha256Fingerprint(leaf) } };
  return { stop: false, withheldBecause: `the server's certificate failed the TLS checks (${failed.join(', ')}), so nothing says it is the depot` };
}

/** What the TLS stage judges a chain by: the given CAs, the name the installer uses, and what the handshake showed. */
export interface ChainJudging extends TlsJudging {
  hostName: string;
  /** The address the depot's name resolved to: the SAN's name and address are judged as a pair when it is known. */
  address?: string;
  /** The protocol negotiated; none for a chain not served yet (the CA move's new pair). */
  protocol?: string | null;
  /** Whether the chain reaches a public root (only said in `tls.ca.not-given`). */
  publicRoot?: boolean;
}

/**
 * The TLS stage's verdict on a chain (leaf first, as PEM): what `check` finds of the certificate a depot
 * serves, with its finding ids; the CA move judges its new pair by it before serving it.
 */
export function judgeChain(chainPems: string[], judging: ChainJudging): Finding[] {
  const [leaf, ...intermediates] = chainPems;
  if (!leaf) throw new Error('the chain holds no certificate');
  const { hostName } = judging;
  return [
    ...tlsFindings(judging.protocol, leaf, intermediates, judging.publicRoot ?? false, hostName, judging),
    ...leafGivenAsCa(leaf, intermediates, hostName, judging.caPems ?? []),
    ...caExpiryFindings(leaf, intermediates, judging.caPems ?? [], judging.now),
    ...(judging.address !== undefined ? sanPairFindings(leaf, hostName, judging.address) : []),
  ];
}

/** The leaf as the report shows it (IPv6 addresses as people write them, fd00::2). */
function summary(snapshot: TlsSnapshot, leaf: string): TlsSummary {
  const info = readCertificate(leaf);
  return {
    protocol: snapshot.protocol,
    cipher: snapshot.cipher,
    subject: info.subject,
    issuer: info.issuer,
    dnsNames: info.san.dns,
    ipAddresses: info.san.ips,
    sha256: info.fingerprints.sha256,
  };
}

function tlsFindings(
  protocol: string | null | undefined,
  leaf: string,
  intermediates: string[],
  publicRoot: boolean,
  hostName: string,
  judging: TlsJudging,
): Finding[] {
  const findings: Finding[] = [];
  if (protocol !== undefined && protocol !== 'TLSv1.2' && protocol !== 'TLSv1.3') {
    findings.push({
      id: 'tls.version',
      severity: 'error',
      message: `The server negotiated ${protocol}; the installer speaks TLS 1.2 and 1.3 only.`,
      installer: TLS_REJECTION,
      fix: 'Enable TLS 1.2 or 1.3 on the server.',
    });
  }
  const lint = lintServerCertificate(leaf, {
    host: hostName,
    caPems: judging.caPems?.length ? judging.caPems : undefined,
    chainPems: intermediates,
    now: judging.now,
  });
  // In a check the consequence is always the depot update's error, keyed on its code.
  for (const f of lint) findings.push(f.severity === 'error' ? { ...f, installer: TLS_REJECTION } : f);
  if (!judging.caPems?.length) {
    const top = readCertificate(intermediates.at(-1) ?? leaf);
    findings.push({
      id: 'tls.ca.not-given',
      severity: 'error',
      message: `No \`caPems\` given: the installer trusts only CAs imported into its own store, so this check cannot say it would. The certificate was issued by "${top.issuer}"${publicRoot ? ' and chains to a public root' : ', which is not a public root'}.`,
      evidence: { issuer: top.issuer, topCertificateSha256: top.fingerprints.sha256, chainsToPublicRoot: publicRoot },
      installer: `${TLS_REJECTION}, unless that CA is in its store`,
      fix: 'Pass `caPems` with the CA certificate that you import into the installer (`trustCa` `caPems` FILE).',
    });
  }
  return findings;
}
