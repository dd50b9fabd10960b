import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { exposedFileWarning } from '../util/fs.js';
import { readSelection, selectionOf } from '../depot/selection.js';
import { listUpgradeMetadata } from '../depot/upgrade-metadata.js';
import { statusAccess } from './status/access.js';
import { esxStatus } from './status/esx.js';
import { certificatesOf } from './status/certificates.js';
import { fileLooker, summaryOf } from './status/files.js';
import { groupReleases } from './status/releases.js';
import { catalogSource, hclStatus, manifestSource, verifiedEntries } from './status/sources.js';
import type { StatusData, StatusOptions } from './status/types.js';

// Only node:crypto and plain reading under here: the serving process that looks at the depot stays small
// (node-forge and a compiled JSON schema would add about 8 and 11 MB to it). `depotkit depot verify` and
// `check` judge the catalog's shape and the certificate in depth; this page shows what it can read.

export { installerUrl } from './status/certificates.js';
export type {
  FileState,
  StatusAccess,
  StatusCa,
  StatusCertificate,
  StatusComponent,
  StatusData,
  StatusEsxDepot,
  StatusFile,
  StatusHcl,
  StatusOptions,
  StatusRelease,
  StatusSource,
  StatusSummary,
} from './status/types.js';

/**
 * Looks at the depot under `root` the cheap way: the catalog, the manifest and the HCL's time, and each file the
 * catalog names by its size (one stat each, nothing hashed), plus what build, unpack or mirror hashed and
 * remembered in `<root>/.depotkit/verified.json`. Problems with the depot are part of the result, never thrown.
 * `depotkit serve` calls it at start and on SIGHUP; `depotkit export` can render it as a static page.
 */
export async function statusData(root: string, options: StatusOptions): Promise<StatusData> {
  const dir = resolve(root);
  const realDir = await realpath(dir).catch(() => dir);
  const now = options.now ?? new Date();
  const { certificate, ca } = certificatesOf(options.certPem, options.caPem);
  const choices = await readSelection(dir);
  const keyExposed = options.keyFile === undefined ? undefined : await exposedFileWarning(options.keyFile);
  const access = statusAccess(options, ca.certificate !== null, choices);
  const catalog = await catalogSource(dir);
  const manifest = await manifestSource(dir);
  const selection = selectionOf(choices, catalog.entries, manifest.releases);
  const look = fileLooker(dir, realDir, await verifiedEntries(dir), selection?.chosen);
  const { grouping, releases, otherComponents } = await groupReleases(catalog.entries, manifest.releases, look, selection);
  return {
    format: 1,
    checkedAt: now.toISOString(),
    check: 'size',
    summary: await summaryOf(catalog.entries, look, catalog.source.state === 'ok'),
    catalog: catalog.source,
    manifest: manifest.source,
    grouping,
    releases,
    ...(selection ? { selection: selection.words, selectionChoices: choices } : {}),
    otherComponents,
    hcl: await hclStatus(dir),
    upgradeMetadata: await listUpgradeMetadata(dir),
    esx: await esxStatus(dir),
    certificate,
    ...(keyExposed ? { keyExposed } : {}),
    ca,
    access,
  };
}
