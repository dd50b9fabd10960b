import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { componentDir } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { addRelease } from '../transfer/releases-fixture.js';

/** The components each later release brings a new build of; the others it takes unchanged from 9.0.0.0. */
const CHANGED = ['VCENTER', 'NSX_T_MANAGER'];
const LATER = ['9.0.1.0', '9.0.2.0', '9.0.3.0'];

export interface ReleasesDepot {
  /** 9.0.0.0, every binary here. */
  complete: string;
  /** 9.0.1.0, none of its own binaries here (a depot cut to other releases). */
  metadataOnly: string;
  /** 9.0.2.0, its NSX_T_MANAGER binary missing. */
  missing: { version: string; path: string };
  /** 9.0.3.0, its VCENTER binary holding 9.0.2.0's VCENTER build. */
  otherBuild: { version: string; path: string; productVersion: string; holds: string; holdsVersion: string };
}

/** The product version addRelease gives a component's new build in a release. */
const productVersion = (release: string, component: string) => `${release}.${25000000 + CHANGED.indexOf(component)}`;
const fileOf = (release: string, component: string) => `${componentDir(component)}/${component.toLowerCase()}-${productVersion(release, component)}.bin`;

/** The binaries only one of the later releases lists (its new builds); the rest it shares with 9.0.0.0. */
export function ownBinaries(version: string): string[] {
  if (!LATER.includes(version)) throw new Error(`no later release ${version}`);
  return CHANGED.map((component) => fileOf(version, component));
}

/**
 * A demo depot of four releases as the vendor's metadata lists them: the manifest's releases each name a build of
 * every component, and 9.0.1.0 to 9.0.3.0 bring new builds of VCENTER and NSX_T_MANAGER (each binary of its own
 * size, so that a size tells one build from another). One release complete, one metadata only, one with a binary
 * missing, one with a file holding another build's bytes.
 */
export async function releasesDepot(root: string, binarySize = 4096): Promise<ReleasesDepot> {
  await makeDemoDepot(root, { binarySize, signingDir: `${root}-signing` });
  for (const [r, version] of LATER.entries())
    await addRelease(
      root,
      version,
      CHANGED,
      CHANGED.map((_, c) => binarySize + 100 * (r + 1) + c + 1),
    );
  for (const path of ownBinaries('9.0.1.0')) await rm(join(root, path));
  const missing = fileOf('9.0.2.0', 'NSX_T_MANAGER');
  await rm(join(root, missing));
  const other = fileOf('9.0.3.0', 'VCENTER');
  const holds = fileOf('9.0.2.0', 'VCENTER');
  await copyFile(join(root, holds), join(root, other));
  return {
    complete: '9.0.0.0',
    metadataOnly: '9.0.1.0',
    missing: { version: '9.0.2.0', path: missing },
    otherBuild: {
      version: '9.0.3.0',
      path: other,
      productVersion: productVersion('9.0.3.0', 'VCENTER'),
      holds,
      holdsVersion: productVersion('9.0.2.0', 'VCENTER'),
    },
  };
}

/** Each release's version and state, in the order given. */
export const releaseStates = (releases: ReadonlyArray<{ version: string; state: string }>): string[][] => releases.map((r) => [r.version, r.state]);

/** The state verify, check and the status page give each release of releasesDepot's depot. */
export const RELEASE_STATES = [
  ['9.0.0.0', 'complete'],
  ['9.0.1.0', 'metadata-only'],
  ['9.0.2.0', 'binaries-missing'],
  ['9.0.3.0', 'wrong-binaries'],
];

/** The same with 9.0.2.0's and 9.0.3.0's own binaries removed (a depot cut to 9.0.0.0): the later releases metadata only. */
export const CUT_RELEASE_STATES = [
  ['9.0.0.0', 'complete'],
  ['9.0.1.0', 'metadata-only'],
  ['9.0.2.0', 'metadata-only'],
  ['9.0.3.0', 'metadata-only'],
];
