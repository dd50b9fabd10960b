import { readFile } from 'node:fs/promises';
import { describe, it } from 'vitest';
import { EXPORT_DEBIAN } from '../../src/constants.js';
import { CADDY, CADDY_USER, startCaddyfile } from '../export/helpers.js';
import { moveRefusedThenCompleted, siteMoveTests, type SiteKind } from './ca-move-site.js';

/**
 * Whether this host has the setting the export's steps give for Caddy: without it, Linux resets the
 * connections queued on the socket a reload closes (the consumer sees ECONNRESET), whatever the move does.
 */
const MIGRATES = (await readFile(`/proc/sys/${EXPORT_DEBIAN.caddy.migrateSysctl.replaceAll('.', '/')}`, 'utf8').catch(() => '0')).trim() === '1';

/** Run as the caddy user, as Debian's caddy.service runs it: Caddy reads the key through its group, as the export's steps give it. */
const CADDY_SITE: SiteKind = {
  server: 'caddy',
  file: 'Caddyfile',
  start: (caddyfile, port, dir) => startCaddyfile(caddyfile, port, dir, { asCaddyUser: true }),
  refusals: /"level":"error"/,
  excused: (f) => !MIGRATES && f.errorCode === 'DEPOT_NOT_AVAILABLE' && /ECONNRESET/.test(f.message ?? ''),
};

/**
 * The exported Caddy site path of the CA move: `depotkit export caddy` writes a whole Caddyfile that reads
 * the certificate and key where they are; the move writes the new pair over those files and runs Caddy's
 * reload (forced, as Debian's unit does: the Caddyfile itself is unchanged), while every consumer keeps
 * validating. Zero failed validations where the host has the export's net.ipv4.tcp_migrate_req step (CI
 * sets it); without it, none but connection resets.
 */
describe.skipIf(!CADDY)('moving an exported Caddy site to another CA', () => {
  const site = siteMoveTests(CADDY_SITE);

  // Only where Caddy reads as the caddy user (the tests run as root): a key root's alone is then one it cannot read.
  it.runIf(CADDY_USER)(
    "a key Caddy cannot read: the move stops with Caddy's own reason, the old certificate served; once readable, the same move completes",
    async () => {
      await moveRefusedThenCompleted(site, CADDY_SITE);
    },
    120_000,
  );
});
