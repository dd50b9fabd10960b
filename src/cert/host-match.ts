/** Two DNS names alike, without case or a trailing dot. */
export function sameName(a: string, b: string): boolean {
  const norm = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return norm(a) === norm(b);
}

/** The host name as a certificate names it: trimmed, and a URL-style IPv6 literal ([fd00::1]) as the bare address. */
export function bareHost(host: string | undefined): string | undefined {
  return host?.trim().replace(/^\[(.*)\]$/, '$1');
}
