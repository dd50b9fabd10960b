import type { DepotLockHolder } from '../depot/lock.js';
import type { HclGuard, MetadataChange } from '../depot/metadata-guard.js';
import type { ReleaseStatus } from '../transfer/releases.js';
import type { SelectOptions, SelectionSummary } from '../transfer/select.js';
import { describeChoice } from '../depot/selection.js';
import { type EsxProductStatus, describeProductState } from '../esx/status.js';
import { formatBytes } from '../util/progress.js';
import { plural } from '../util/text.js';

// What the transfer commands share: the library loaded when one runs, the catalog's signing certificate, report lines.

// Libraries are imported when a command runs, so that every other command starts fast.
export const transfer = () => import('../transfer/index.js');

export async function readSigningCert(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  const { readPemFile } = await import('../cert/pem.js');
  return (await readPemFile(file, ['CERTIFICATE', 'PUBLIC KEY'])).join('');
}

export function listed(label: string, items: string[], max = 20): string[] {
  if (items.length === 0) return [];
  const lines = [`${label}: ${items.length}`, ...items.slice(0, max).map((i) => `  ${i}`)];
  if (items.length > max) lines.push(`  ... and ${items.length - max} more (use --json for all)`);
  return lines;
}

/** A release per line, in the words of the verdict depot verify, check and the status page give it. */
export function formatReleases(releases: ReleaseStatus[]): string[] {
  return releases.map((r) => r.message);
}

/** A lock left by a run that is gone, taken over: said, since that run may have left work half done. */
export function tookOverLine(took: DepotLockHolder | undefined): string[] {
  return took
    ? [`The depot's lock was left by ${took.operation} (process ${took.pid} on ${took.host}, since ${took.startedAt}), which is gone: taken over.`]
    : [];
}

export function selectOptionsOf(opts: { release: string[]; component: string[]; imageType?: string }): SelectOptions {
  return { releases: opts.release, components: opts.component, ...(opts.imageType ? { imageType: opts.imageType } : {}) };
}

export function formatSelection(s: SelectionSummary | undefined): string[] {
  if (!s) return [];
  return [
    `Selection (${describeChoice(s)}): ${plural(s.chosen.binaries, 'binary', 'binaries')} (${formatBytes(s.chosen.bytes)}) chosen, ${plural(s.leftOut.binaries, 'binary', 'binaries')} (${formatBytes(s.leftOut.bytes)}) left out; all metadata carried.`,
  ];
}

/** What an import's metadata changed (releases first: what an installer will list), and where the replaced metadata was kept. */
export function formatMetadataChange(c: MetadataChange | undefined): string[] {
  if (!c) return [];
  const list = (items: string[]) => (items.length ? items.join(', ') : 'none');
  const versions = `${plural(c.added.length, 'product version')} added, ${c.removed.length} removed`;
  const kept = c.backup ? ` The replaced metadata is kept in ${c.backup}.` : '';
  return [`Metadata changed: releases added ${list(c.releases.added)}, removed ${list(c.releases.removed)}; ${versions}.${kept}`];
}

/** What an import did about an incoming vSAN HCL that is not newer than the depot's (`whose`: "the pack's"). */
export function formatHclGuard(h: (HclGuard & { backup?: string }) | undefined, whose: string): string[] {
  if (!h) return [];
  return [
    h.action === 'kept'
      ? `The depot's vSAN HCL was kept: ${whose} is not newer (${h.because}). --force puts ${whose} in place (the depot's is kept as a backup).`
      : `The depot's vSAN HCL was replaced by ${whose}, which is not newer (${h.because}), as --force asked${h.backup ? `; the replaced one is kept in ${h.backup}` : ''}.`,
  ];
}

/** A selective pack's left-out binaries, said once, so that they are not read as missing. */
export function formatLeftOut(s: SelectionSummary | undefined): string[] {
  if (!s) return [];
  const byRelease = !s.components.length && !s.imageType;
  const whose = byRelease ? 'of releases not in this pack' : 'not chosen for this pack';
  const chose = byRelease ? s.releases.join(', ') : describeChoice(s);
  return [`${plural(s.leftOut.binaries, 'binary', 'binaries')} ${whose} left out (selected: ${chose}).`];
}

/** An ESX product and version per line, in the words of esx verify and the status page. */
export function formatEsxProducts(products: readonly EsxProductStatus[]): string[] {
  return products.map((p) => `ESX ${p.productId || 'store'} ${p.version} (${p.metadata}): ${describeProductState(p)}`);
}
