import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import type { UnpackReport } from '../transfer/unpack.js';
import { EXIT } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { printJson, printLines } from './output.js';
import {
  formatEsxProducts,
  formatHclGuard,
  formatLeftOut,
  formatMetadataChange,
  formatReleases,
  listed,
  readSigningCert,
  tookOverLine,
  transfer,
} from './transfer-shared.js';

/** `depot unpack`: a pack's volumes checked and its files placed in a depot. */
export function registerUnpack(depot: Command): void {
  withOptions(
    depot
      .command('unpack <media-dir...>')
      .description("check a pack's volumes and place its files in a depot (resumable; a delta onto its base gives the new depot)"),
  ).action(async (media: string[], opts: { out: string; force?: boolean; expect?: string; packSigningCert?: string; signingCert?: string; json?: boolean }) => {
    const signingCertPem = await readSigningCert(opts.signingCert);
    const packSigningCertPem = await readSigningCert(opts.packSigningCert);
    const { unpackDepot } = await transfer();
    const report = await withByteProgress('unpacking', !opts.json, (hooks) =>
      unpackDepot({ media, out: opts.out, force: opts.force, expect: opts.expect, packSigningCertPem, signingCertPem, ...hooks }),
    );
    if (opts.json) printJson(report);
    else printLines(formatUnpackReport(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
  });
}

function volumeProblem(v: UnpackReport['volumes'][number]): string {
  switch (v.state) {
    case 'missing':
      return 'is missing from every folder given';
    case 'refused':
      return `was not read: it ${v.reason ?? 'is not a regular file'}`;
    case 'truncated':
      return `is truncated (${v.actualSize} of ${v.size} bytes)`;
    default:
      return v.actualSize !== undefined && v.actualSize !== v.size
        ? `is ${v.actualSize} bytes, the manifest says ${v.size}`
        : `is damaged (SHA-256 ${v.actualSha256}, the manifest says another)`;
  }
}

/** What the seal and the signature vouch for through the manifest: the catalog, or the ESX metadata of a pack of ESX depots alone. */
const what = (r: UnpackReport): string => (r.holds === 'esx' ? 'ESX metadata' : 'catalog');

function vouchLine(r: UnpackReport): string {
  switch (r.vouchedBy) {
    case 'seal':
      return `The seal given matches (${r.seal}): the ${what(r)} and the manifest are the ones packed.`;
    case 'signature':
      return `The pack's signature verifies with the key given: the manifest, and through it the ${what(r)}, are the ones packed.`;
    case 'seal+signature':
      return `The seal given matches (${r.seal}) and the pack's signature verifies with the key given.`;
    default:
      return `The media vouched for themselves (no --expect seal or --pack-signing-cert given): media whose catalog and binaries were both replaced would pass. Compare this seal with the one written down where the pack was made: ${r.seal}`;
  }
}

export function formatUnpackReport(r: UnpackReport): string[] {
  const lines: string[] = [...tookOverLine(r.lock.tookOverFrom)];
  for (const v of r.volumes) {
    if (v.state === 'ok' || v.state === 'not-needed' || v.state === 'ranges') continue;
    lines.push(`ERROR volume ${v.name} ${volumeProblem(v)}${v.path ? `: ${v.path}` : ''}`);
  }
  const read = r.volumes.filter((v) => v.state !== 'not-needed' && v.state !== 'missing' && v.state !== 'refused').length;
  lines.push(
    `Placed ${plural(r.placed.length, 'file')} (${formatBytes(r.placed.reduce((s, p) => s + p.size, 0))}); ${r.alreadyInPlace.length} already in place; ${read} of ${r.volumes.length} volumes read (${formatBytes(r.bytesRead)}).`,
  );
  lines.push(...formatLeftOut(r.selection));
  lines.push(
    ...listed(
      'Not placed',
      r.failed.map((f) => `${f.path}: ${f.reason}`),
    ),
  );
  lines.push(...listed("Flagged at packing (content not the catalog's): not placed", r.flagged));
  if (r.metadata === 'held')
    lines.push(
      'The new metadata was not put in place: files it names are missing, so the depot keeps its own. Supply the volumes named above and run unpack again.',
    );
  if (r.metadata === 'placed') lines.push(...formatMetadataChange(r.metadataChange));
  lines.push(...formatHclGuard(r.hcl, "the pack's"));
  if (r.stale.length)
    lines.push(
      `${plural(r.stale.length, 'file')} the pack's source no longer has ${r.stale.length === 1 ? 'is' : 'are'} still here: depotkit depot prune ${r.out} lists them.`,
    );
  lines.push(...formatReleases(r.releases));
  lines.push(...formatUnpackEsx(r.esx));
  lines.push(...r.verify.findings.filter((f) => f.severity !== 'info').flatMap(formatFinding));
  if (r.catalogFrom === 'depot') lines.push("The pack carries no catalog: its binaries were held to the depot's, the one the pack was made from.");
  lines.push(vouchLine(r));
  if (r.holds === 'esx') return [...lines, esxOnlyEnd(r)];
  const counts = countBySeverity(r.verify.findings);
  const whole = r.selection ? 'holds every binary this pack chose' : 'is complete';
  if (r.ok) lines.push(`OK: ${r.out} ${whole}; depot verify's checks: ${counts.error} errors, ${counts.warning} warnings.`);
  else if (r.failed.length || r.volumes.some((v) => v.state !== 'ok' && v.state !== 'ranges' && v.state !== 'not-needed'))
    lines.push(`INCOMPLETE: fix the volumes named above and run the same command again: what is in place is kept.`);
  else lines.push(`FAILED: every file is in place but ${r.out} fails depot verify's checks: ${counts.error} errors, ${counts.warning} warnings (see above).`);
  return lines;
}

/** The last line after a pack of ESX depots alone: `PROD/` was neither touched nor judged, `esx verify`'s checks were run. */
function esxOnlyEnd(r: UnpackReport): string {
  const counts = countBySeverity(r.esx?.findings ?? []);
  const which = r.delta ? "of the pack's source: the delta went onto the ESX depots it was made against" : 'the pack carries';
  if (r.ok) return `OK: ${r.out} holds the ESX depots ${which} (not PROD/); esx verify's checks: ${counts.error} errors, ${counts.warning} warnings.`;
  return 'INCOMPLETE: fix the volumes named above and run the same command again: what is in place is kept.';
}

function formatUnpackEsx(esx: UnpackReport['esx']): string[] {
  if (!esx) return [];
  const lines: string[] = [];
  if (esx.metadata === 'held')
    lines.push(
      "The ESX depots' new indexes and metadata were not put in place: VIBs they name are missing, so each keeps its own. Supply the volumes named above and run unpack again.",
    );
  lines.push(...formatEsxProducts(esx.depots.flatMap((d) => d.products)));
  lines.push(...esx.findings.filter((f) => f.severity !== 'info').flatMap(formatFinding));
  return lines;
}
