import { describe, it } from 'vitest';
import { NGINX, startNginxSite } from '../export/helpers.js';
import { exportedSite, moveReloadedByHand, moveWithReload, type SiteKind } from './ca-move-site.js';

const NGINX_SITE: SiteKind = { server: 'nginx', file: 'depotkit.conf', start: startNginxSite, refusals: /\[emerg\]|\[crit\]/ };

/**
 * The exported nginx site path of the CA move: `depotkit export nginx` writes a site that reads
 * the certificate and key where they are; the move writes the new pair over those files and runs
 * nginx's own reload, while every consumer keeps validating the depot.
 */
describe.skipIf(!NGINX)('moving an exported nginx site to another CA', () => {
  const site = exportedSite(NGINX_SITE);

  it('writes the new pair over the files the site reads, runs its reload, and every consumer validates before, during and after with zero failures', async () => {
    await moveWithReload(site, NGINX_SITE);
  }, 120_000);

  it('without a reload command, writes the pair and stops naming the reload the export gives; after it, the same move carries on and completes', async () => {
    await moveReloadedByHand(site, NGINX_SITE);
  }, 120_000);
});
