import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the system openssl, an independent implementation to check ours against. */
export function openssl(args: string[], input?: string): ToolResult {
  const r = spawnSync('openssl', args, { input, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** openssl's `-text` dump of a certificate file. */
export function x509Text(path: string): string {
  const r = openssl(['x509', '-in', path, '-noout', '-text']);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout;
}

/** The value lines under an `X509v3 <name>:` heading of a `-text` dump. */
export function extensionText(text: string, name: string): { header: string; value: string } | undefined {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.trim().startsWith(`X509v3 ${name}:`));
  if (i < 0) return undefined;
  return { header: lines[i]!.trim(), value: lines[i + 1]!.trim() };
}

/** A CSR made by openssl req in `dir`, as a management server or an admin would make it. */
export function opensslCsr(
  dir: string,
  name: string,
  subject: string,
  extra: string[] = [],
  keyAlg = ['-newkey', 'rsa:2048'],
): { csrPath: string; keyPath: string; pem: string } {
  const csrPath = join(dir, `${name}.csr`);
  const keyPath = join(dir, `${name}.key`);
  const r = openssl(['req', '-new', ...keyAlg, '-nodes', '-keyout', keyPath, '-out', csrPath, '-subj', subject, '-utf8', ...extra]);
  if (r.code !== 0) throw new Error(r.stderr);
  return { csrPath, keyPath, pem: openssl(['req', '-in', csrPath]).stdout };
}

function succeeded(r: ToolResult): ToolResult {
  if (r.code !== 0) throw new Error(r.stderr);
  return r;
}

/** A self-signed RSA root made by openssl req -x509 (its key written to `keyPath`): its PEM. */
export function opensslRoot(keyPath: string, subject: string, days: number, extra: string[] = []): string {
  return succeeded(openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-subj', subject, '-days', String(days), ...extra])).stdout;
}

/** The request `csrPath` signed by openssl x509 -req with the CA in `caPath` and `caKeyPath` and the [v3] section of `extPath`: its PEM. */
export function opensslSign(
  csrPath: string,
  ca: { caPath: string; caKeyPath: string },
  extPath: string,
  opts: { days?: number; digest?: string } = {},
): string {
  const args = ['x509', '-req', '-in', csrPath, '-CA', ca.caPath, '-CAkey', ca.caKeyPath, '-CAcreateserial', '-days', String(opts.days ?? 90)];
  return succeeded(openssl([...args, `-${opts.digest ?? 'sha256'}`, '-extfile', extPath, '-extensions', 'v3'])).stdout;
}
