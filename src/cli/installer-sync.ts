import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import { releasesLines, syncResultLines } from './installer-output.js';
import { installerLib, runCommand, type ConnectionFlags } from './installer-run.js';

interface SyncFlags extends ConnectionFlags {
  syncTimeout: number;
}

/** `installer sync`: each consumer syncs the depot it is set to, and says SYNCED or SYNC_FAILED with the fix. */
export function registerSync(installer: Command): void {
  withOptions(
    installer
      .command('sync')
      .description(
        "have each consumer sync its depot's metadata now and wait for the verdict (SYNCED, or SYNC_FAILED with its message and fix); then list the releases it offers",
      ),
  ).action(async (flags: SyncFlags) => {
    const lib = await installerLib();
    const options = { timeoutMs: flags.syncTimeout * 1000 };
    await runCommand(
      flags,
      async (client) => {
        const result = await lib.syncConsumer(client, options);
        return { ok: result.ok, result };
      },
      syncResultLines,
    );
  });
}

/** `installer releases`: the releases each consumer offers from the depot metadata it synced. */
export function registerReleases(installer: Command): void {
  withOptions(
    installer.command('releases').description('list the releases each consumer offers from the depot metadata it last synced (GET /v1/releases)'),
  ).action(async (flags: ConnectionFlags) => {
    const lib = await installerLib();
    await runCommand(flags, async (client) => ({ ok: true, result: await lib.listReleases(client) }), releasesLines);
  });
}
