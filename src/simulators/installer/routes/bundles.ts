import express from 'express';
import { BUNDLE_DOWNLOAD_STATUS, INSTALLER_API, INSTALLER_ERROR_CODES, apiComponentName, type BundleDownloadStatus } from '../../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from '../literals.js';
import { ApiError } from '../api-error.js';
import type { Authorize } from '../authorize.js';
import { releaseBundles, type SimBundle } from '../bundles.js';
import type { InstallerSimContext } from '../context.js';
import type { DepotLifecycle } from '../lifecycle.js';
import { asksForDownload, page } from '../wire.js';
import { currentConnection } from './connection.js';
import { query, route } from './paths.js';

/** `Bundle`. */
function bundleView(lifecycle: DepotLifecycle, b: SimBundle) {
  const released = b.releaseDate ? { releasedDate: b.releaseDate } : {};
  return {
    id: b.id,
    type: b.type,
    version: b.productVersion,
    vendor: 'VMware',
    ...released,
    sizeMB: Math.round((b.size / (1024 * 1024)) * 1000) / 1000,
    downloadStatus: lifecycle.downloads.state(b.id).status,
    isCompliant: true,
    isCumulative: false,
    components: [{ type: apiComponentName(b.component), imageType: b.type, toVersion: b.productVersion, vendor: 'VMware', ...released }],
  };
}

/** `BundleDownloadStatusInfo`. */
function statusView(lifecycle: DepotLifecycle, b: SimBundle) {
  const s = lifecycle.downloads.state(b.id);
  return {
    bundleId: b.id,
    componentType: apiComponentName(b.component),
    version: b.productVersion,
    downloadStatus: s.status,
    downloadScheduledTime: s.scheduledTime ?? 0,
    ...(s.startTime ? { downloadStartTime: s.startTime } : {}),
    ...(s.endTime ? { downloadEndTime: s.endTime } : {}),
    ...(s.downloadId ? { downloadId: s.downloadId } : {}),
    downloadedSize: s.downloadedSize,
    isDownloadable: s.status === BUNDLE_DOWNLOAD_STATUS.pending || s.status === BUNDLE_DOWNLOAD_STATUS.failed,
    isDownloadCancellable: s.status === BUNDLE_DOWNLOAD_STATUS.scheduled || s.status === BUNDLE_DOWNLOAD_STATUS.inProgress,
    ...(s.message ? { message: s.message } : {}),
  };
}

/**
 * The refusal of a download asked for again while it is done or under way, in the codes the
 * vendor's Python SDK download sample takes as "already asked for" when it is run again:
 * scheduled, and (assumed: the sample's words are "initiated previously") downloading, is
 * ALREADY_SCHEDULED; validating is NOT_AVAILABLE; done is ALREADY_DOWNLOADED. Pending and
 * failed bundles may be downloaded (again): undefined.
 */
export function repeatedDownloadRefusal(status: BundleDownloadStatus, name: string): ApiError | undefined {
  switch (status) {
    case BUNDLE_DOWNLOAD_STATUS.success:
      return new ApiError(409, INSTALLER_ERROR_CODES.bundleAlreadyDownloaded, `Bundle ${name} is already downloaded.`);
    case BUNDLE_DOWNLOAD_STATUS.scheduled:
    case BUNDLE_DOWNLOAD_STATUS.inProgress:
      return new ApiError(409, INSTALLER_ERROR_CODES.bundleAlreadyScheduled, `The download of bundle ${name} was asked for already (${status}).`);
    case BUNDLE_DOWNLOAD_STATUS.validating:
      return new ApiError(409, INSTALLER_ERROR_CODES.bundleNotAvailable, `Bundle ${name} is being validated.`);
    default:
      return undefined;
  }
}

/** Starts a bundle's download unless it is done or under way; the answer is the download task. */
function startDownload(ctx: InstallerSimContext, bundle: SimBundle) {
  const refused = repeatedDownloadRefusal(ctx.lifecycle.downloads.state(bundle.id).status, bundle.name);
  if (refused) throw refused;
  const state = ctx.lifecycle.downloads.start(bundle, currentConnection(ctx));
  const created = new Date(state.scheduledTime ?? Date.now()).toISOString();
  return { id: state.downloadId, name: `Bundle download ${bundle.name}`, type: 'BUNDLE_DOWNLOAD', status: 'IN_PROGRESS', creationTimestamp: created };
}

/** The bundles the synced catalog offers, their download status, downloading and deleting them. */
export function registerBundleRoutes(app: express.Express, ctx: InstallerSimContext, authorize: Authorize): void {
  const json = express.json({ limit: '64kb' });
  const lifecycle = ctx.lifecycle;
  const findBundle = (id: string): SimBundle => {
    const bundle = lifecycle.bundle(id);
    if (!bundle) throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.bundleNotFound, `No bundle ${id} in the synced depot metadata.`);
    return bundle;
  };

  // Before /v1/bundles/{id}, which would take download-status for an id.
  app.get(INSTALLER_API.bundleDownloadStatus, async (req, res) => {
    await authorize(req);
    const releaseVersion = query(req, 'releaseVersion');
    const bundleId = query(req, 'bundleId');
    let bundles = lifecycle.bundles;
    if (releaseVersion !== undefined) {
      const release = lifecycle.metadata?.releases.find((r) => r.version === releaseVersion);
      bundles = release ? releaseBundles(release, bundles, query(req, 'imageType')) : [];
    }
    if (bundleId !== undefined) bundles = bundles.filter((b) => b.id === bundleId);
    res.status(200).json(page(bundles.map((b) => statusView(lifecycle, b))));
  });

  app.get(INSTALLER_API.bundles, async (req, res) => {
    await authorize(req);
    const bundleType = query(req, 'bundleType');
    res.status(200).json(page(lifecycle.bundles.filter((b) => bundleType === undefined || b.type === bundleType).map((b) => bundleView(lifecycle, b))));
  });

  app.get(route(INSTALLER_API.bundle), async (req, res) => {
    await authorize(req);
    res.status(200).json(bundleView(lifecycle, findBundle(String(req.params.id))));
  });

  app.patch(route(INSTALLER_API.bundle), json, async (req, res) => {
    await authorize(req);
    const bundle = findBundle(String(req.params.id));
    if (!asksForDownload(req.body)) {
      throw new ApiError(
        400,
        INSTALLER_SIM_ERROR_CODES.invalidBundleSpec,
        'The request needs bundleDownloadSpec with downloadNow true (or a scheduledTimestamp).',
      );
    }
    res.status(202).json(startDownload(ctx, bundle));
  });

  app.delete(route(INSTALLER_API.bundle), async (req, res) => {
    await authorize(req);
    const bundle = findBundle(String(req.params.id));
    if (!(await lifecycle.downloads.delete(bundle))) {
      throw new ApiError(409, INSTALLER_SIM_ERROR_CODES.bundleDownloadInProgress, `Bundle ${bundle.name} is being downloaded: it cannot be deleted now.`);
    }
    ctx.log.write('INFO', 'BundleDownloadService', `Bundle ${bundle.name} (${bundle.id}) deleted`);
    res.status(204).end();
  });
}
