import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import type { DepotSpec } from '../installer/index.js';
import type { VcenterResync } from '../procedures/vcenters/session.js';
import { INSTALLER_DEFAULTS } from '../installer/defaults.js';
import { usageError } from '../util/errors.js';
import { byteBars } from '../util/progress.js';
import { depotLine, downloadLines, statusLines, trustLine, untrustLine, vcenterResyncLines } from './installer-output.js';
import { installerLib, readCaCertificates, runCommand, type ConnectionFlags } from './installer-run.js';
import { registerReleases, registerSync } from './installer-sync.js';
import { assertUserForPassword, readPassword } from './options.js';
import { warn } from './output.js';

interface TrustFlags extends ConnectionFlags {
  ca: string[];
  remove?: boolean;
  force?: boolean;
}

interface StatusFlags extends ConnectionFlags {
  ca: string[];
  expiryWarnDays: number;
}

interface DepotFlags extends ConnectionFlags {
  depotUrl?: string;
  depotHost?: string;
  depotPort: number;
  depotUser?: string;
  depotPasswordFile?: string;
  depotPasswordEnv?: string;
  trustCa: string[];
  force?: boolean;
  waitTimeout: number;
  sync: boolean;
  syncTimeout: number;
}

interface DownloadFlags extends ConnectionFlags {
  release: string;
  imageType: string;
  component: string[];
  sku: string;
  waitTimeout: number;
}

export function registerInstallerCommands(program: Command): void {
  const installer = program.command('installer').description("installers and SDDC Managers: trust the depot's CA, connect, sync, download");
  registerTrust(installer);
  registerConnectDepot(installer);
  registerSync(installer);
  registerReleases(installer);
  registerDownload(installer);
  registerStatus(installer);
}

function registerTrust(installer: Command): void {
  withOptions(
    installer
      .command('trust')
      .description(
        'import CA certificates as TRUSTED_FOR_OUTBOUND, or with --remove take them away (both compare certificates, never aliases: a re-run changes nothing)',
      ),
  ).action(async (flags: TrustFlags) => {
    const lib = await installerLib();
    const pems = await readCaCertificates(flags.ca);
    if (flags.force && !flags.remove) throw usageError('--force goes with --remove: importing a certificate needs no force.');
    if (flags.remove) {
      const options = { force: flags.force, timeoutMs: flags.timeout * 1000 };
      await runCommand(flags, async (client) => ({ ok: true, result: await lib.removeTrusted(client, pems, options) }), untrustLine);
      return;
    }
    for (const sentence of lib.leafTrustWarnings(pems)) warn(sentence);
    await runCommand(flags, async (client) => ({ ok: true, result: await lib.ensureTrusted(client, pems) }), trustLine);
  });
}

function registerConnectDepot(installer: Command): void {
  // `installer depot`, its first name, read oddly beside `depotkit depot`: kept as an alias.
  withOptions(
    installer
      .command('connect-depot')
      .alias('depot')
      .description(
        `update the installer's offline depot settings, wait for its validation, have it sync the depot's metadata (up to ${INSTALLER_DEFAULTS.syncTimeoutMs / 1000} s) and report the status`,
      ),
  ).action(async (flags: DepotFlags) => {
    const lib = await installerLib();
    const spec = depotSpec(flags);
    // The library's one check of the spec, before any password is asked for or anything is sent.
    const connect = lib.depotConnector(spec);
    await depotPassword(spec, flags);
    const caPems = flags.trustCa.length > 0 ? await readCaCertificates(flags.trustCa) : undefined;
    for (const sentence of lib.leafTrustWarnings(caPems ?? [])) warn(sentence);
    // A consumer already on this depot syncs again when the depot's catalog changed since its last sync (a new release).
    // Asked once for all the consumers, by the first one's task (so that an interruption meanwhile is one the command
    // handles), while they are logged in to and set; a row re-synced without it says why.
    let catalog: ReturnType<typeof lib.depotCatalogDate> | undefined;
    const catalogOnce = () => (catalog ??= lib.depotCatalogDate(spec, { caPems, timeoutMs: flags.timeout * 1000 }));
    const options = { caPems, force: flags.force, waitTimeoutMs: flags.waitTimeout * 1000, sync: flags.sync, syncTimeoutMs: flags.syncTimeout * 1000 };
    await runCommand(
      flags,
      async (client) => {
        const { ok, trusted, push, sync, ...listed } = await connect(client, {
          ...options,
          ...(flags.sync ? { catalog: catalogOnce() } : {}),
        });
        return { ok, result: { ...push, ...(trusted ? { trusted } : {}), ...(sync ? { sync } : {}), ...listed } as ConsumerResult };
      },
      consumerLines,
      undefined,
      // A vCenter of the inventory syncs its ESX depots again: a new release reaches it too.
      flags.sync
        ? (await import('../procedures/vcenters/session.js')).resyncVcenterDepots({
            timeoutMs: flags.timeout * 1000,
            syncTimeoutMs: flags.syncTimeout * 1000,
          })
        : undefined,
    );
  });
}

type ConsumerResult = Parameters<typeof depotLine>[0] | VcenterResync;

/** A row of connect-depot: an installer's or SDDC Manager's depot, or a vCenter's ESX depots synced again. */
function consumerLines(result: ConsumerResult): string[] {
  return 'components' in result ? vcenterResyncLines(result) : depotLine(result);
}

/** The depot the flags name; the library checks it. */
function depotSpec(flags: DepotFlags): DepotSpec {
  if (!!flags.depotUrl === !!flags.depotHost) throw usageError('Give the depot with --depot-url, or with --depot-host (and --depot-port), not both.');
  const spec: DepotSpec = flags.depotUrl ? { url: flags.depotUrl } : { hostname: flags.depotHost, port: flags.depotPort };
  if (flags.depotUser) spec.username = flags.depotUser;
  return spec;
}

/** The depot user's password, into the spec, once the library has taken the spec. */
async function depotPassword(spec: DepotSpec, flags: DepotFlags): Promise<void> {
  const source = { passwordFile: flags.depotPasswordFile, passwordEnv: flags.depotPasswordEnv };
  assertUserForPassword(flags.depotUser, source, '--depot-user', '--depot-password');
  if (flags.depotUser) {
    const whose = `depot user ${flags.depotUser}`;
    spec.password = await readPassword(
      { file: source.passwordFile, env: source.passwordEnv },
      `password of ${whose}`,
      `Password of ${whose}`,
      '--depot-password',
    );
  }
}

function registerDownload(installer: Command): void {
  withOptions(
    installer.command('download').description('have the installer download every bundle of a release from its depot, and wait until each is validated'),
  ).action(async (flags: DownloadFlags) => {
    const lib = await installerLib();
    // Byte bars for one installer on a terminal; a fleet or JSON gets the rows at the end.
    const bars = byteBars(!flags.json && !!flags.installer && process.stderr.isTTY === true);
    const options = {
      release: flags.release,
      imageType: flags.imageType,
      components: flags.component.length > 0 ? flags.component : undefined,
      sku: flags.sku,
      timeoutMs: flags.waitTimeout * 1000,
    };
    await runCommand(
      flags,
      async (client) => {
        const report = await lib.downloadRelease(client, {
          ...options,
          onProgress: (rows) => rows.forEach((b) => bars.update(b.id, `${b.component.padEnd(20)} ${b.status.padEnd(10)}`, b.downloadedSize, b.size)),
        });
        return { ok: report.ok, result: report };
      },
      downloadLines,
      bars,
    );
  });
}

function registerStatus(installer: Command): void {
  withOptions(
    installer
      .command('status')
      .description(
        "appliance info, depot settings and status, the trusted certificates, and whether the depot's CA is among them (a consumer without it, or with it about to expire, fails its row)",
      ),
  ).action(async (flags: StatusFlags) => {
    // Its own module, not the whole library: status is what scripts run in a loop.
    const { installerStatus } = await import('../installer/status.js');
    const depotCaPems = flags.ca.length > 0 ? await readCaCertificates(flags.ca) : undefined;
    const options = { depotCaPems, expiryWarnDays: flags.expiryWarnDays, timeoutMs: flags.timeout * 1000 };
    await runCommand(
      flags,
      async (client, _target, appliance) => {
        const status = await installerStatus(client, { ...options, appliance });
        return { ok: status.depotCa?.flag === undefined, result: status };
      },
      statusLines,
    );
  });
}
