import { describe, it } from 'vitest';
import { APACHE, startApacheSite } from '../export/helpers.js';
import { exportedSite, moveReloadedByHand, moveWithReload, type SiteKind } from './ca-move-site.js';

const APACHE_SITE: SiteKind = {
  server: 'apache',
  file: 'depotkit.conf',
  start: startApacheSite,
  refusals: /:(emerg|alert|crit)\]|\[ssl:error\]/,
};

/**
 * The exported Apache site path of the CA move: `depotkit export apache` writes a virtual host that reads
 * the certificate and key where they are; the move writes the new pair over those files and runs Apache's
 * graceful reload (its root-started parent reads the new pair), while every consumer keeps validating.
 */
describe.skipIf(!APACHE)('moving an exported Apache site to another CA', () => {
  const site = exportedSite(APACHE_SITE);

  it('writes the new pair over the files the site reads, runs its graceful reload, and every consumer validates before, during and after with zero failures', async () => {
    await moveWithReload(site, APACHE_SITE);
  }, 120_000);

  it('without a reload command, writes the pair and stops naming the reload the export gives; after it, the same move carries on and completes', async () => {
    await moveReloadedByHand(site, APACHE_SITE);
  }, 120_000);
});
