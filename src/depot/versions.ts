/** 9.0.0.0.24755229 -> 9.0.0.0: a product version's first four numbers name its release. */
export function releaseOfVersion(productVersion: string): string {
  return productVersion.split('.').slice(0, 4).join('.');
}

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
