/** 9.0.0.0.24755229 -> 9.0.0.0: a product version's first four numbers name its release. */
export function releaseOfVersion(productVersion: string): string {
  return productVersion.split('.').slice(0, 4).join('.');
}
