/**
 * The one order of versions, for release versions (9.0.0.0.24755229) and the appliances' own (9.1.0.0.25368698)
 * alike: the depot sorts releases by it, the installer client and the installer simulator gate fields on it.
 */

/**
 * Orders versions number by number (9.0.10 after 9.0.9), other parts by code point. Not localeCompare: its
 * collator maps about 3 MB of ICU data into the serving process.
 */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/(\d+)/);
  const pb = b.split(/(\d+)/);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    // split() with a capture group puts the numbers at odd indexes.
    if (i % 2 === 1) return Number(x) - Number(y) || x.length - y.length;
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

/**
 * Is `version` (9.1.0.0.25368698) at least `since` (9.1.1)? Compared over as many parts as `since` has, a part
 * `version` lacks counting as 0; a version whose parts there are not numbers is no later one.
 */
export function versionAtLeast(version: string, since: string): boolean {
  const length = since.split('.').length;
  const have = version.split('.').slice(0, length);
  if (!have.every((part) => /^\d+$/.test(part))) return false;
  while (have.length < length) have.push('0');
  return compareVersions(have.join('.'), since) >= 0;
}
