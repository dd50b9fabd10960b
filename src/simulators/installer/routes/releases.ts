import type express from 'express';
import { INSTALLER_API, INSTALLER_ERROR_CODES, INSTALLER_PRODUCT_SKUS } from '../../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from '../literals.js';
import { ApiError } from '../api-error.js';
import type { Authorize } from '../authorize.js';
import { releaseComponents, releasesView } from '../bundles.js';
import type { InstallerSimContext } from '../context.js';
import { page } from '../wire.js';
import { query, route } from './paths.js';

/** The releases the synced depot offers, and their components' bundles. */
export function registerReleaseRoutes(app: express.Express, ctx: InstallerSimContext, authorize: Authorize): void {
  const lifecycle = ctx.lifecycle;

  app.get(INSTALLER_API.releases, async (req, res) => {
    await authorize(req);
    const version = query(req, 'versionEq');
    // Before a depot's manifest has been read, the real service answers this error, not an empty list.
    if (!lifecycle.metadata) throw new ApiError(404, INSTALLER_ERROR_CODES.manifestNotFound, 'LCM manifest not found: no depot metadata has been synced yet.');
    const all = releasesView(lifecycle.metadata, INSTALLER_PRODUCT_SKUS[0]);
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
}
