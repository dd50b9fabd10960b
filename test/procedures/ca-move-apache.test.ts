import { describe } from 'vitest';
import { APACHE, startApacheSite } from '../export/helpers.js';
import { siteMoveTests, type SiteKind } from './ca-move-site.js';

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
  siteMoveTests(APACHE_SITE, 'its graceful reload');
});
