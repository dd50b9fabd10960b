import { BUNDLE_DOWNLOAD_FINAL, BUNDLE_DOWNLOAD_STATUS, INSTALLER_PRODUCT_SKUS } from '../constants.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import type { InstallerClient } from './client.js';
import type { BundleDownloadStatusInfo } from './wire.js';
import { INSTALLER_DEFAULTS } from './defaults.js';

export interface DownloadOptions {
  /** The release version, as the installer lists it (e.g. 9.0.0.0). */
  release: string;
  /** INSTALL (default) or UPGRADE. */
  imageType?: string;
  /** Only the bundles of these components; every component of the release by default. */
  components?: string[];
  /** The product; VCF by default. */
  sku?: string;
  /** How long to wait for every bundle to end; 6 hours by default (a release is tens of GB). */
  timeoutMs?: number;
  pollMs?: number;
  /** Called after each status read, with every bundle's state so far. */
  onProgress?: (bundles: BundleProgress[]) => void;
}

export interface BundleProgress {
  id: string;
  component: string;
  name: string;
  size: number;
  /** requested: asked for now; already-downloaded: done before; in-progress: under way before this run. */
  action: 'requested' | 'already-downloaded' | 'in-progress';
  status: string;
  downloadedSize: number;
  message?: string;
}

export interface DownloadReport {
  ok: boolean;
  release: string;
  imageType: string;
  bundles: BundleProgress[];
}

const UNDER_WAY: readonly string[] = [BUNDLE_DOWNLOAD_STATUS.scheduled, BUNDLE_DOWNLOAD_STATUS.inProgress, BUNDLE_DOWNLOAD_STATUS.validating];

/**
 * Has the installer download every bundle of a release from its depot and
 * waits until each is validated or failed. Idempotent: a bundle already
 * downloaded is done, one under way is waited for, only pending or failed
 * ones are asked for.
 */
export async function downloadRelease(client: InstallerClient, opts: DownloadOptions): Promise<DownloadReport> {
  const imageType = opts.imageType ?? 'INSTALL';
  const sku = opts.sku ?? INSTALLER_PRODUCT_SKUS[0];
  const details = (await client.releaseComponents(sku, opts.release, imageType)).find((d) => d.releaseVersion === opts.release);
  if (!details) {
    throw new DepotkitError(
      `The installer offers no ${sku} release ${opts.release} (${imageType}).`,
      EXIT.problems,
      'Sync the depot first (`connectDepot` syncs it, `syncDepot` syncs it again), and give the version as the consumer lists it (`listReleases`).',
    );
  }
  const offered = details.components.map((c) => c.name);
  const unknown = (opts.components ?? []).filter((c) => !offered.includes(c));
  if (unknown.length > 0) throw usageError(`${unknown.join(', ')}: not a component of ${sku} ${opts.release}; it has ${offered.join(', ')}.`);
  const bundles: BundleProgress[] = details.components
    .filter((c) => !opts.components || opts.components.includes(c.name))
    .flatMap((c) => (c.versions ?? []).flatMap((v) => v.artifacts.bundles.map((b) => ({ component: c.name, bundle: b }))))
    .map(({ component, bundle }) => ({
      id: bundle.id,
      component,
      name: bundle.name,
      size: bundle.size,
      action: 'requested',
      status: BUNDLE_DOWNLOAD_STATUS.pending,
      downloadedSize: 0,
    }));

  const apply = (rows: BundleDownloadStatusInfo[]) => {
    const byId = new Map(rows.map((r) => [r.bundleId, r]));
    for (const b of bundles) {
      const row = byId.get(b.id);
      if (!row) continue;
      b.status = row.downloadStatus;
      b.downloadedSize = row.downloadedSize ?? (row.downloadStatus === BUNDLE_DOWNLOAD_STATUS.success ? b.size : b.downloadedSize);
      if (row.message !== undefined) b.message = row.message;
    }
  };

  apply(await client.downloadStatus());
  for (const b of bundles) {
    if (b.status === BUNDLE_DOWNLOAD_STATUS.success) b.action = 'already-downloaded';
    else if (UNDER_WAY.includes(b.status)) b.action = 'in-progress';
    else await requestDownload(client, b);
  }

  const deadline = Date.now() + (opts.timeoutMs ?? INSTALLER_DEFAULTS.downloadTimeoutMs);
  for (;;) {
    opts.onProgress?.(bundles);
    if (bundles.every((b) => BUNDLE_DOWNLOAD_FINAL.includes(b.status))) break;
    if (Date.now() >= deadline) {
      const waiting = bundles.filter((b) => !BUNDLE_DOWNLOAD_FINAL.includes(b.status)).map((b) => `${b.component} ${b.status}`);
      throw new DepotkitError(
        `The downloads did not end within ${Math.round((opts.timeoutMs ?? INSTALLER_DEFAULTS.downloadTimeoutMs) / 1000)} s: ${waiting.join(', ')}.`,
        EXIT.problems,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? 2000));
    apply(await client.downloadStatus());
  }
  return { ok: bundles.every((b) => b.status === BUNDLE_DOWNLOAD_STATUS.success), release: opts.release, imageType, bundles };
}

/** Asks for one bundle; one that another client asked for meanwhile is followed, not failed. */
async function requestDownload(client: InstallerClient, b: BundleProgress): Promise<void> {
  const answer = await client.startBundleDownload(b.id);
  if (answer === 'already-downloaded') {
    b.action = 'already-downloaded';
    b.status = BUNDLE_DOWNLOAD_STATUS.success;
    b.downloadedSize = b.size;
    return;
  }
  if (answer === 'in-progress') b.action = 'in-progress';
  b.status = BUNDLE_DOWNLOAD_STATUS.scheduled;
  delete b.message;
}
