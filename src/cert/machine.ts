import { hostname, networkInterfaces } from 'node:os';
import { loadCaDir } from './ca.js';
import { issueServerCert } from './issue.js';

/** The names a certificate for this machine should carry: its host name, localhost, and its addresses. */
export function machineNames(): { dns: string[]; ips: string[] } {
  const dns = [...new Set([hostname().toLowerCase(), 'localhost'].filter((n) => n !== ''))];
  const ips = new Set<string>(['127.0.0.1']);
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      // Link-local IPv6 addresses carry a zone and cannot be a SAN.
      if (!(a.family === 'IPv6' && a.address.toLowerCase().startsWith('fe80'))) ips.add(a.address);
    }
  }
  return { dns, ips: [...ips] };
}

/**
 * A fresh server certificate from the CA in `caDir` (ca-key.pem, ca-cert.pem)
 * for `names`, this machine's without them: the chain (leaf then CA), what a
 * server sends, and its key.
 */
export async function certificateFromCa(caDir: string, names: { dns: string[]; ips: string[] } = machineNames()): Promise<{ certPem: string; keyPem: string }> {
  const ca = await loadCaDir(caDir);
  const issued = await issueServerCert(ca, { dns: names.dns, ips: names.ips });
  return { certPem: issued.chainPem, keyPem: issued.keyPem };
}
