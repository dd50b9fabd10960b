import { isIP } from 'node:net';
import { readCertificate } from '../cert/index.js';
import type { Finding } from '../util/findings.js';

const FLEET_WANTS_BOTH = "9.1's fleet lifecycle checks the certificate against both the depot's name and its address.";

/**
 * The SAN's name and address as a pair: the 9.0 installer checks only the name it connects to, but 9.1's
 * fleet lifecycle wants both the FQDN and the IP address in the SAN. `hostName` is the name the installer
 * is given, `address` what the depot's URL resolved to.
 */
export function sanPairFindings(leaf: string, hostName: string, address: string): Finding[] {
  const cert = readCertificate(leaf);
  const evidence = { host: hostName, address, dns: cert.san.dns, ips: cert.san.ips };
  if (isIP(hostName) === 0) {
    if (!cert.coversHost(hostName) || cert.coversHost(address)) return [];
    return [
      {
        id: 'tls.san.address-missing',
        severity: 'warning',
        message: `The certificate's SAN holds ${hostName} but not IP:${address}, the address it resolves to. ${FLEET_WANTS_BOTH}`,
        evidence,
        fix: `Re-issue the certificate with both names: \`issueCert\` \`caDir\` <ca-dir> \`dns\` ${hostName} \`ips\` ${address} \`outDir\` <out-dir>.`,
      },
    ];
  }
  if (!cert.coversHost(hostName) || cert.san.dns.length > 0) return [];
  return [
    {
      id: 'tls.san.name-missing',
      severity: 'warning',
      message: `The certificate's SAN holds IP:${hostName} but no DNS name for the depot. ${FLEET_WANTS_BOTH}`,
      evidence,
      fix: `Re-issue the certificate with both names: \`issueCert\` \`caDir\` <ca-dir> \`dns\` <depot FQDN> \`ips\` ${hostName} \`outDir\` <out-dir>.`,
    },
  ];
}
