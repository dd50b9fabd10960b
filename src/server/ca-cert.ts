import { hostname, networkInterfaces } from 'node:os';
import { loadCaDir } from '../pki/ca.js';
import { issueServerCert } from '../pki/issue.js';
import type { TlsMaterial } from './tls.js';

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

/** A fresh server certificate from the CA in `caDir` (ca-key.pem, ca-cert.pem); the chain is served. */
export async function certificateFromCa(caDir: string, names: { dns: string[]; ips: string[] }): Promise<TlsMaterial> {
  const ca = await loadCaDir(caDir);
  const issued = await issueServerCert(ca, { dns: names.dns, ips: names.ips });
  return { certPem: issued.chainPem, keyPem: issued.keyPem };
}
