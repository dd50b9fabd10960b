import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import type { Finding } from '../../util/findings.js';
import type { Catalog } from '../catalog.js';
import { catalogEntriesOf } from '../catalog-entries.js';
import { readManifestReleases } from '../manifest-releases.js';
import { judgeWithFindings } from '../release-findings.js';
import type { ReleaseJudgement, SeenFile } from '../release-status.js';
import { readSelection, selectionOf } from '../selection.js';

/**
 * What each release holds, from what the binary phases saw on disk, and the findings read with it (a binary left
 * out of a depot cut to some releases, or by the selection the depot records, is info). A manifest that cannot be read groups the releases by the
 * catalog's versions; the metadata phase has said what is wrong with it.
 */
export async function judgeDepotReleases(
  root: string,
  catalog: Catalog,
  seen: ReadonlyMap<string, SeenFile>,
  findings: Finding[],
): Promise<{ judgement: ReleaseJudgement; findings: Finding[] }> {
  const text = await readFile(join(root, DEPOT_PATHS.manifest), 'utf8').catch(() => undefined);
  const read = text === undefined ? undefined : readManifestReleases(text);
  const manifest = typeof read === 'string' ? undefined : read;
  const selection = selectionOf(await readSelection(root), catalogEntriesOf(catalog), manifest);
  return judgeWithFindings(catalog, manifest, seen, findings, selection);
}
