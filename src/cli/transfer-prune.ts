import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import type { PruneReport } from '../transfer/prune.js';
import { formatBytes } from '../util/progress.js';
import { plural } from '../util/text.js';
import { printJson, printLines } from './output.js';
import { tookOverLine, transfer } from './transfer-shared.js';

/** `depot prune`: binaries the catalog no longer names and temporary files of killed runs, listed or removed. */
export function registerPrune(depot: Command): void {
  withOptions(
    depot.command('prune <depot-dir>').description('list binaries the catalog no longer names and temporary files of killed runs; remove them with --yes'),
  ).action(async (dir: string, opts: { yes?: boolean; json?: boolean }) => {
    await (await import('../depot/demo.js')).refuseUnfinishedDemo(dir);
    const { pruneDepot } = await transfer();
    const report = await pruneDepot(dir, { yes: opts.yes });
    if (opts.json) printJson(report);
    else printLines(formatPruneReport(report));
  });
}

export function formatPruneReport(r: PruneReport): string[] {
  if (r.candidates.length === 0) return [...tookOverLine(r.lock?.tookOverFrom), `Nothing to prune in ${r.depot}.`];
  const kinds = {
    stale: 'not named by the catalog',
    unlisted: 'a VIB no ESX metadata lists',
    temporary: 'temporary file of a killed run',
    partial: 'partial download (a mirror resumes it)',
  };
  const lines = r.candidates.slice(0, 50).map((c) => `  ${c.path}  ${formatBytes(c.size)}  ${kinds[c.kind]}`);
  if (r.candidates.length > 50) lines.push(`  ... and ${r.candidates.length - 50} more (use --json for all)`);
  lines.unshift(`${r.removed ? 'Removed' : 'Would remove'} ${plural(r.candidates.length, 'file')}, ${formatBytes(r.bytes)}, from ${r.depot}:`);
  lines.unshift(...tookOverLine(r.lock?.tookOverFrom));
  if (!r.removed) lines.push(`Nothing was removed; run again with --yes to remove them.`);
  return lines;
}
