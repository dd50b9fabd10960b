import express, { type Request } from 'express';
import { BUNDLE_DOWNLOAD_STATUS, INSTALLER_API, INSTALLER_ERROR_CODES, INSTALLER_JWT, INSTALLER_PRODUCT_SKUS } from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from './literals.js';
import { isObject } from '../../installer/wire.js';
import { ApiError } from './api-error.js';
import { releaseBundles, releaseComponents, releasesView, stableId, type SimBundle } from './bundles.js';
import { page } from './page.js';
import type { DepotConnection } from './downloads.js';
import { targetOf, type DepotLifecycle } from './lifecycle.js';
import type { InstallerSimContext } from './context.js';

type Authorize = (req: Request, anyOf?: readonly string[]) => Promise<unknown>;

/** Express's form of a `{name}` path template. */
const route = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * What comes after the depot settings: syncing the depot's metadata, the
 * releases and bundles it offers, and downloading them.
 */
export function registerLifecycleRoutes(app: express.Express, ctx: InstallerSimContext, lifecycle: DepotLifecycle, authorize: Authorize): void {
  const json = express.json({ limit: '64kb' });

  const connection = (): DepotConnection => {
    const depot = ctx.depot.current;
    if (!depot) throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.depotNotConfigured, 'No offline depot is configured: update the depot settings first.');
    return {
      target: targetOf(depot),
      account: { username: depot.username, password: ctx.depot.password },
      trustedPems: [...ctx.trust.outboundPems(), ...(depot.trustedCertificates ?? [])],
      options: { timeoutMs: ctx.depotTimeoutMs, resolve: ctx.resolve },
    };
  };

  const findBundle = (id: string): SimBundle => {
    const bundle = lifecycle.bundle(id);
    if (!bundle) throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.bundleNotFound, `No bundle ${id} in the synced depot metadata.`);
    return bundle;
  };

  const bundleView = (b: SimBundle) => ({
    id: b.id,
    type: b.type,
    version: b.productVersion,
    vendor: 'VMware',
    ...(b.releaseDate ? { releasedDate: b.releaseDate } : {}),
    sizeMB: Math.round((b.size / (1024 * 1024)) * 1000) / 1000,
    downloadStatus: lifecycle.downloads.state(b.id).status,
    isCompliant: true,
    isCumulative: false,
    components: [
      { type: b.component, imageType: b.type, toVersion: b.productVersion, vendor: 'VMware', ...(b.releaseDate ? { releasedDate: b.releaseDate } : {}) },
    ],
  });

  const statusView = (b: SimBundle) => {
    const s = lifecycle.downloads.state(b.id);
    return {
      bundleId: b.id,
      componentType: b.component,
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
  };

  app.get(INSTALLER_API.depotSyncInfo, async (req, res) => {
    await authorize(req);
    res.status(200).json(lifecycle.syncInfo);
  });

  app.patch(INSTALLER_API.depotSyncInfo, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    res.status(202).json(lifecycle.startSync(connection()));
  });

  app.get(INSTALLER_API.depotMachineDetails, async (req, res) => {
    await authorize(req);
    // Stable for the life of the simulator's state: derived from its token secret.
    res.status(200).json({ machineId: stableId(`machine ${ctx.tokens.secretHex}`) });
  });

  app.delete(INSTALLER_API.depotSettings, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    ctx.depot.current = undefined;
    ctx.depot.password = undefined;
    lifecycle.forget();
    ctx.log.write('INFO', 'DepotSettingsService', 'Depot settings deleted');
    await ctx.changed();
    res.status(204).end();
  });

  app.get(INSTALLER_API.releases, async (req, res) => {
    await authorize(req);
    const version = query(req, 'versionEq');
    const all = lifecycle.metadata ? releasesView(lifecycle.metadata, INSTALLER_PRODUCT_SKUS[0]) : [];
    res.status(200).json(page(all.filter((r) => version === undefined || (r as { version: string }).version === version)));
  });

  app.get(route(INSTALLER_API.releaseComponents), async (req, res) => {
    await authorize(req);
    const sku = String(req.params.sku).toUpperCase();
    if (!(INSTALLER_PRODUCT_SKUS as readonly string[]).includes(sku))
      throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.releaseNotFound, `No product ${req.params.sku}: one of ${INSTALLER_PRODUCT_SKUS.join(', ')}.`);
    const releaseVersion = query(req, 'releaseVersion');
    const elements = lifecycle.metadata ? releaseComponents(lifecycle.metadata, lifecycle.bundles, sku, releaseVersion, query(req, 'imageType')) : [];
    if (releaseVersion !== undefined && elements.length === 0) {
      throw new ApiError(
        404,
        INSTALLER_SIM_ERROR_CODES.releaseNotFound,
        `No release ${releaseVersion} in the synced depot metadata (sync status ${lifecycle.syncInfo.syncStatus}).`,
      );
    }
    res.status(200).json(page(elements));
  });

  app.get(INSTALLER_API.bundleDownloadStatus, async (req, res) => {
    await authorize(req);
    const releaseVersion = query(req, 'releaseVersion');
    const bundleId = query(req, 'bundleId');
    const imageType = query(req, 'imageType');
    let bundles = lifecycle.bundles;
    if (releaseVersion !== undefined) {
      const release = lifecycle.metadata?.releases.find((r) => r.version === releaseVersion);
      bundles = release ? releaseBundles(release, bundles, imageType) : [];
    }
    if (bundleId !== undefined) bundles = bundles.filter((b) => b.id === bundleId);
    res.status(200).json(page(bundles.map(statusView)));
  });

  app.get(INSTALLER_API.bundles, async (req, res) => {
    await authorize(req);
    const bundleType = query(req, 'bundleType');
    res.status(200).json(page(lifecycle.bundles.filter((b) => bundleType === undefined || b.type === bundleType).map(bundleView)));
  });

  app.get(route(INSTALLER_API.bundle), async (req, res) => {
    await authorize(req);
    res.status(200).json(bundleView(findBundle(String(req.params.id))));
  });

  app.patch(route(INSTALLER_API.bundle), json, async (req, res) => {
    await authorize(req);
    const bundle = findBundle(String(req.params.id));
    const spec: unknown = isObject(req.body) ? req.body.bundleDownloadSpec : undefined;
    if (!isObject(spec) || (spec.downloadNow !== true && spec.scheduledTimestamp === undefined)) {
      throw new ApiError(
        400,
        INSTALLER_SIM_ERROR_CODES.invalidBundleSpec,
        'The request needs bundleDownloadSpec with downloadNow true (or a scheduledTimestamp).',
      );
    }
    const current = lifecycle.downloads.state(bundle.id);
    if (current.status === BUNDLE_DOWNLOAD_STATUS.success) {
      throw new ApiError(409, INSTALLER_ERROR_CODES.bundleAlreadyDownloaded, `Bundle ${bundle.name} is already downloaded.`);
    }
    if (current.status !== BUNDLE_DOWNLOAD_STATUS.pending && current.status !== BUNDLE_DOWNLOAD_STATUS.failed) {
      throw new ApiError(409, INSTALLER_SIM_ERROR_CODES.bundleDownloadInProgress, `Bundle ${bundle.name} is being downloaded (${current.status}).`);
    }
    const state = lifecycle.downloads.start(bundle, connection());
    const created = new Date(state.scheduledTime ?? Date.now()).toISOString();
    res
      .status(202)
      .json({ id: state.downloadId, name: `Bundle download ${bundle.name}`, type: 'BUNDLE_DOWNLOAD', status: 'IN_PROGRESS', creationTimestamp: created });
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
