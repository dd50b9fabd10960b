import { findByFingerprint, normalizePem, readCertificate, sha256Fingerprint, splitPemBlocks } from '../cert/index.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { connectMgmt, type MgmtClient, type MgmtConnection } from './client.js';

/** Where the trusted root chains are, and how to log in there. */
export type VcenterTrustOptions = MgmtConnection;

export interface ChainCertificate {
  subject: string;
  issuer: string;
  notAfter: string;
  sha256: string;
}

export interface TrustReport {
  server: string;
  api: string;
  /** The CA asked about: its subject and SHA-256. */
  ca: { subject: string; sha256: string };
  /** The chains holding it (after adding, the one added or found). */
  chains: string[];
  /** Whether the server's chains changed. */
  changed: boolean;
}

export interface TrustListReport {
  server: string;
  api: string;
  chains: Array<{ chain: string; certificates: ChainCertificate[] }>;
}

/** The CA's certificate first, then any issuers given after it. */
function caChain(caPem: string): string[] {
  const pems = splitPemBlocks(normalizePem(caPem), 'CERTIFICATE');
  if (pems.length === 0) throw usageError('The CA holds no certificate.');
  return pems;
}

function certificate(pem: string): ChainCertificate {
  const info = readCertificate(pem);
  return { subject: info.subject, issuer: info.issuer, notAfter: info.notAfter.toISOString(), sha256: info.fingerprints.sha256 };
}

async function withClient<T>(opts: VcenterTrustOptions, fn: (client: MgmtClient) => Promise<T>): Promise<T> {
  const client = await connectMgmt(opts);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The ids of the chains holding the certificate whose SHA-256 is `sha256`. */
async function chainsHolding(client: MgmtClient, sha256: string): Promise<string[]> {
  const found: string[] = [];
  for (const chain of await client.listChains()) {
    if (findByFingerprint(await client.getChain(chain), sha256).length > 0) found.push(chain);
  }
  return found;
}

/**
 * Puts the CA into the server's trusted root chains unless a chain holds it already (compared by
 * the SHA-256 of the certificate, whatever the PEM text): the chains are listed first, so a
 * second run changes nothing. Returns the chain that holds it.
 */
export async function ensureTrustedChain(client: MgmtClient, caPems: string[]): Promise<{ chains: string[]; changed: boolean }> {
  const held = await chainsHolding(client, sha256Fingerprint(caPems[0]!));
  if (held.length > 0) return { chains: held, changed: false };
  return { chains: [await client.createChain(caPems)], changed: true };
}

/** `vcenter trust`: the CA (with its issuers after it) among the server's trusted root chains. */
export async function trustVcenterCa(opts: VcenterTrustOptions & { caPem: string }): Promise<TrustReport> {
  const pems = caChain(opts.caPem);
  return withClient(opts, async (client) => {
    const { chains, changed } = await ensureTrustedChain(client, pems);
    return { server: client.origin.origin, api: client.generation, ca: summary(pems[0]!), chains, changed };
  });
}

/** Every trusted root chain of the server with its certificates. */
export async function listVcenterTrust(opts: VcenterTrustOptions): Promise<TrustListReport> {
  return withClient(opts, async (client) => {
    const chains = [];
    for (const chain of await client.listChains()) chains.push({ chain, certificates: (await client.getChain(chain)).map(certificate) });
    return { server: client.origin.origin, api: client.generation, chains };
  });
}

/** What the removal keeps: certificates it must never take away, whatever chain holds them. */
export interface RemoveChainsOptions {
  /**
   * `holds`: whether a certificate must stay trusted (one anchoring the chain a depot serves, say); when a
   * chain to remove holds one, nothing is removed, and the error says `why` it stays and the `fix`.
   */
  keep?: { holds: (pem: string) => boolean; why: string; fix: string };
}

/**
 * The one removal of a CA from the trusted root chains: every chain holding it (found by SHA-256) is
 * removed, then the chains are listed again to prove none holds it; none holding it changes nothing.
 * Refused before anything is removed when such a chain also holds a certificate `keep` keeps.
 */
export async function removeTrustedChains(
  client: MgmtClient,
  caPems: string[],
  opts: RemoveChainsOptions = {},
): Promise<{ chains: string[]; changed: boolean }> {
  const sha256 = sha256Fingerprint(caPems[0]!);
  const chains = await chainsHolding(client, sha256);
  const { keep } = opts;
  for (const chain of keep ? chains : []) {
    const kept = (await client.getChain(chain)).find((pem) => keep!.holds(pem));
    if (kept === undefined) continue;
    const { subject, sha256: keptSha256 } = summary(kept);
    throw new DepotkitError(
      `The trusted root chain ${chain} of ${client.origin.host} holds ${subject} (SHA-256 ${keptSha256}), which ${keep!.why}: nothing was removed.`,
      EXIT.problems,
      keep!.fix,
    );
  }
  for (const chain of chains) await client.deleteChain(chain);
  const left = await chainsHolding(client, sha256);
  if (left.length > 0) {
    throw new DepotkitError(
      `${client.origin.host} answered the removal but its chains ${left.join(', ')} still hold the CA: it is still trusted.`,
      EXIT.problems,
    );
  }
  return { chains, changed: chains.length > 0 };
}

/** Removes every trusted root chain that holds the CA; none holding it changes nothing. */
export async function untrustVcenterCa(opts: VcenterTrustOptions & { caPem: string }): Promise<TrustReport> {
  const pems = caChain(opts.caPem);
  return withClient(opts, async (client) => {
    const { chains, changed } = await removeTrustedChains(client, pems);
    return { server: client.origin.origin, api: client.generation, ca: summary(pems[0]!), chains, changed };
  });
}

function summary(pem: string): { subject: string; sha256: string } {
  const { subject, sha256 } = certificate(pem);
  return { subject, sha256 };
}
