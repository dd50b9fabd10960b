// The installer commands' work in-process, as the command line does it between its flags and its rows.
import {
  FleetSession,
  INSTALLER_DEFAULTS,
  connectDepot,
  depotCatalogDate,
  downloadRelease,
  ensureTrusted,
  installerStatus,
  resolveTargets,
  type ApplianceInfo,
  type ConnectDepotOptions,
  type DepotSpec,
  type DownloadOptions,
  type FleetRow,
  type InstallerClient,
  type InstallerTarget,
  type StatusOptions,
  type TargetSpec,
} from '../../src/installer/index.js';

/** A row as `depotkit installer … --json` prints it, and the warnings the command shows first. */
export interface Run<T> {
  ok: boolean;
  rows: Array<FleetRow<T>>;
  /** What the password files risk (the command prints each as a warning). */
  warnings: string[];
}

/**
 * What an installer command does between its flags and its rows, in-process, as the command line's
 * runCommand does it: the targets resolved (bad input throws the usage error the command exits 2 with), the
 * passwords read, `task` run on each consumer logged in and revoked afterwards.
 */
export async function runOnConsumers<T>(
  spec: TargetSpec & { concurrency?: number },
  task: (client: InstallerClient, target: InstallerTarget, appliance: ApplianceInfo) => Promise<{ ok: boolean; result: T }>,
): Promise<Run<T>> {
  const session = new FleetSession(await resolveTargets(spec), { concurrency: spec.concurrency ?? INSTALLER_DEFAULTS.concurrency, timeoutMs: 30_000 });
  const warnings = await session.resolvePasswords();
  const rows = await session.run(task);
  return { ok: rows.every((r) => r.ok), rows, warnings };
}

/**
 * `installer connect-depot`'s task: its row's result as the command prints it (the push's fields, then what
 * was trusted and synced). As the command does, it asks the depot when its catalog changed (a consumer already
 * on it syncs again when the catalog is newer than its last sync), trusting the CAs it imports.
 */
export const connectTask =
  (spec: DepotSpec, opts: ConnectDepotOptions = {}) =>
  async (client: InstallerClient) => {
    const catalog = (opts.sync ?? true) ? { catalog: depotCatalogDate(spec, { caPems: opts.caPems }) } : {};
    const { ok, trusted, push, sync, ...listed } = await connectDepot(client, spec, { pollMs: 50, syncPollMs: 50, ...catalog, ...opts });
    return { ok, result: { ...push, ...(trusted ? { trusted } : {}), ...(sync ? { sync } : {}), ...listed } };
  };

/** `installer status`'s task: a row fails when the depot's CA is missing or expiring. */
export const statusTask =
  (opts: StatusOptions = {}) =>
  async (client: InstallerClient, _target: InstallerTarget, appliance: ApplianceInfo) => {
    const status = await installerStatus(client, { ...opts, appliance });
    return { ok: status.depotCa?.flag === undefined, result: status };
  };

/** `installer trust`'s task. */
export const trustTask = (pems: string[]) => async (client: InstallerClient) => ({ ok: true, result: await ensureTrusted(client, pems) });

/** `installer download`'s task. */
export const downloadTask = (opts: DownloadOptions) => async (client: InstallerClient) => {
  const report = await downloadRelease(client, { pollMs: 50, ...opts });
  return { ok: report.ok, result: report };
};
