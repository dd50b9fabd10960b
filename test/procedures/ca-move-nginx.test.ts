import { describe } from 'vitest';
import { NGINX, startNginxSite } from '../export/helpers.js';
import { siteMoveTests, type SiteKind } from './ca-move-site.js';

const NGINX_SITE: SiteKind = { server: 'nginx', file: 'depotkit.conf', start: startNginxSite, refusals: /\[emerg\]|\[crit\]/ };

/**
 * The exported nginx site path of the CA move: `depotkit export nginx` writes a site that reads
 * the certificate and key where they are; the move writes the new pair over those files and runs
 * nginx's own reload, while every consumer keeps validating the depot.
 */
describe.skipIf(!NGINX)('moving an exported nginx site to another CA', () => {
  siteMoveTests(NGINX_SITE);
});
