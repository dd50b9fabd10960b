/** Two DNS names alike, without case or a trailing dot. */
export function sameName(a: string, b: string): boolean {
  const norm = (n: string) => n.toLowerCase().replace(/\.$/, '');
  return norm(a) === norm(b);
}
