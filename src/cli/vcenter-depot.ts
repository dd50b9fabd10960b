import type { Command } from 'commander';
import type { VcenterDepotReport } from '../vcenter/index.js';
import { EXIT } from '../util/errors.js';
import { withOptions } from './option-table.js';
import { readUserPassword } from './options.js';
import { printJson, printLines, warn } from './output.js';
import { waitLine } from './vcenter.js';

interface DepotFlags {
  depot: string;
  umds?: boolean;
  description?: string;
  user: string;
  passwordFile?: string;
  passwordEnv?: string;
  serverCa: string[];
  insecure?: boolean;
  syncTimeout: number;
  json?: boolean;
}

/** `vcenter depot`, under the `vcenter` command registered before it: the ESX depot among a vCenter's vLCM depots (once), synced, and what the vCenter then lists. */
export function registerVcenterDepotCommand(program: Command): void {
  const vcenter = program.commands.find((c) => c.name() === 'vcenter');
  if (!vcenter) throw new Error('vcenter depot is registered after the vcenter command.');
  withOptions(
    vcenter
      .command('depot')
      .description("add an ESX depot to vCenter's vSphere Lifecycle Manager (nothing when it is there), sync it and list the components vCenter then offers")
      .argument('<vcenter-url>', 'the vCenter, https://host[:port]'),
  ).action(depot);
}

async function depot(server: string, flags: DepotFlags): Promise<void> {
  const { readCaPems } = await import('../cert/trust-source.js');
  const serverCaPems = flags.serverCa.length > 0 ? await readCaPems(flags.serverCa) : undefined;
  const password = await readUserPassword(flags.user, flags);
  if (flags.insecure) warn("not validating the vCenter's certificate (--insecure).");
  const waiting = waitLine(!flags.json && process.stderr.isTTY === true);
  try {
    const { connectVcenterDepot } = await import('../vcenter/index.js');
    const report = await connectVcenterDepot({
      server,
      user: flags.user,
      password,
      serverCaPems,
      insecure: flags.insecure,
      depot: flags.depot,
      umds: flags.umds,
      description: flags.description,
      syncTimeoutMs: flags.syncTimeout * 1000,
      onProgress: (p) => waiting.show(`  sync ${p.status}${p.total !== undefined ? `: ${p.completed ?? 0} of ${p.total} depots` : ''}`),
    });
    waiting.clear();
    if (flags.json) printJson(report);
    else printLines(depotLines(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
  } finally {
    waiting.clear();
  }
}

const ACTIONS: Record<VcenterDepotReport['action'], string> = { added: 'added', updated: 'updated', unchanged: 'already set, nothing sent' };

/** The report for people: the depot and what was done, the sync, then the components or why the sync failed. */
export function depotLines(r: VcenterDepotReport): string[] {
  const what = r.kind === 'umds' ? 'UMDS depot' : `online depot${r.id ? ` ${r.id}` : ''}`;
  const lines = [`${r.server}: ${what} ${r.depot} ${ACTIONS[r.action]}; sync ${r.sync.status}.`, ...r.notes.map((n) => `  ${n}`)];
  if (!r.ok) {
    lines.push(`  ${r.problem ?? 'The sync failed.'}`);
    if (r.fix) lines.push(`  ${r.fix}`);
  }
  if (r.components.length === 0) lines.push('  components: none listed');
  else for (const c of r.components) lines.push(`  component ${c.name} ${c.versions.join(', ')}`);
  return lines;
}
