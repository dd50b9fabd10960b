import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import type { DiffReport } from '../transfer/diff.js';
import { formatBytes } from '../util/progress.js';
import { printJson, printLines } from './output.js';
import { listed, transfer } from './transfer-shared.js';

/** `depot diff`: what a new depot, metadata archive or pack manifest adds, changes and drops. */
export function registerDiff(depot: Command): void {
  withOptions(
    depot
      .command('diff <old> <new>')
      .description('what a new depot, metadata archive or pack manifest adds, changes and drops, and the bytes to download and carry'),
  ).action(async (older: string, newer: string, opts: { json?: boolean }) => {
    const { diffDepots } = await transfer();
    const report = await diffDepots(older, newer);
    if (opts.json) printJson(report);
    else printLines(formatDiffReport(report));
  });
}

export function formatDiffReport(r: DiffReport): string[] {
  const lines = [
    `Old: ${r.old.source} (${r.old.kind}${r.old.releases.length ? `, releases ${r.old.releases.join(', ')}` : ''})`,
    `New: ${r.new.source} (${r.new.kind}${r.new.releases.length ? `, releases ${r.new.releases.join(', ')}` : ''})`,
  ];
  if (r.releases.added.length) lines.push(`Releases added: ${r.releases.added.join(', ')}`);
  if (r.releases.dropped.length) lines.push(`Releases dropped: ${r.releases.dropped.join(', ')}`);
  lines.push(
    ...listed(
      'Binaries added',
      r.binaries.added.map((b) => `${b.path}  ${formatBytes(b.size)}`),
    ),
  );
  lines.push(
    ...listed(
      'Binaries changed',
      r.binaries.changed.map((b) => `${b.path}  ${formatBytes(b.oldSize)} -> ${formatBytes(b.size)}`),
    ),
  );
  lines.push(
    ...listed(
      'Binaries dropped (depot prune removes them)',
      r.binaries.dropped.map((b) => `${b.path}  ${formatBytes(b.size)}`),
    ),
  );
  lines.push(`${r.binaries.unchanged} binaries unchanged.`);
  lines.push(
    `Metadata: ${r.metadata.added.length} added, ${r.metadata.changed.length} changed, ${r.metadata.dropped.length} dropped, ${r.metadata.unchanged} unchanged.`,
  );
  lines.push(...listed('Metadata changed', r.metadata.changed, 10));
  lines.push(...formatDiffEsx(r.esx));
  lines.push(
    `To download: ${formatBytes(r.bytes.download)}; to carry across (pack --since): ${formatBytes(r.bytes.carry)}; freed by prune: ${formatBytes(r.bytes.dropped)}.`,
  );
  return lines;
}

function formatDiffEsx(esx: DiffReport['esx']): string[] {
  if (!esx) return [];
  const product = (p: { productId: string; version: string; metadata: string }) => `${p.productId} ${p.version} (${p.metadata})`;
  return [
    ...listed('ESX products added', esx.products.added.map(product)),
    ...listed('ESX products changed (another metadata zip)', esx.products.changed.map(product)),
    ...listed('ESX products removed', esx.products.removed.map(product)),
    ...listed(
      'VIBs added',
      esx.vibs.added.map((v) => `${v.path}  ${formatBytes(v.size)}`),
    ),
    ...listed(
      'VIBs changed',
      esx.vibs.changed.map((v) => `${v.path}  ${formatBytes(v.oldSize)} -> ${formatBytes(v.size)}`),
    ),
    ...listed(
      'VIBs no longer listed (depot prune removes them)',
      esx.vibs.removed.map((v) => `${v.path}  ${formatBytes(v.size)}`),
    ),
    `${esx.vibs.unchanged} VIBs unchanged; ESX indexes and metadata zips: ${esx.metadata.added.length} added, ${esx.metadata.changed.length} changed, ${esx.metadata.dropped.length} dropped, ${esx.metadata.unchanged} unchanged.`,
  ];
}
