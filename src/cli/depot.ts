import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import { type Release, UMDS_PATCH_STORE_DIR } from '../constants.js';
// Libraries are imported when a command runs, so that `depotkit --help` and
// every other command start fast.
import type { BuildReport } from '../depot/build.js';
import type { DepotLockHolder } from '../depot/lock.js';
import { refuseUnfinishedDemo } from '../depot/demo.js';
import { type PlaceMode } from '../depot/place.js';
import type { VerifyResult } from '../depot/verify.js';
import { EXIT } from '../util/errors.js';
import { readFileBounded } from '../util/fs.js';
import { PEM_LIMITS } from '../util/limits.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { interruptible } from './process.js';
import { printJson, printLines } from './output.js';
import { registerTransferCommands } from './transfer.js';
import { formatMetadataChange } from './transfer-shared.js';
import { formatReleases, selectionLine } from './release-lines.js';

export function registerDepotCommands(program: Command): void {
  const depot = program.command('depot').description('demo, build, verify, pack, unpack, mirror, prune and diff depots; move-ca');

  registerDemo(depot);

  withOptions(depot.command('build').description("lay out the vendor's metadata and place each catalog binary at PROD/COMP/<component>/<fileName>")).action(
    async (opts: { metadata: string; binaries: string[]; out: string; mode: PlaceMode; checksum?: boolean; force?: boolean; json?: boolean }) => {
      const { buildDepot } = await import('../depot/build.js');
      const report = await withByteProgress('placing', !opts.json, (hooks) =>
        buildDepot({
          metadata: opts.metadata,
          binaries: opts.binaries,
          out: opts.out,
          mode: opts.mode,
          force: opts.force,
          checksumLinks: opts.checksum,
          ...hooks,
        }),
      );
      if (opts.json) printJson(report);
      else printLines(formatBuildReport(report));
      process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
    },
  );

  withOptions(depot.command('verify <dir>').description('check a depot tree: layout, metadata, HCL age, every binary (and with --deep its SHA-256)')).action(
    async (dir: string, opts: { deep?: boolean; signingCert?: string; json?: boolean }) => {
      let signingCertPem: string | undefined;
      if (opts.signingCert) {
        signingCertPem = (await readFileBounded(opts.signingCert, PEM_LIMITS.maxFileBytes, 'PEM file')).toString('utf8');
      }
      await refuseUnfinishedDemo(dir);
      const { verifyDepot } = await import('../depot/verify.js');
      const result = await withByteProgress('hashing', !opts.json, (hooks) => verifyDepot(dir, { deep: opts.deep, signingCertPem, ...hooks }));
      if (opts.json) printJson(result);
      else printLines(formatVerifyResult(result));
      process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
    },
  );

  registerTransferCommands(depot);
}

/** `depot demo`: a lab depot of synthetic binaries, of one release or several, with `--esx` an ESX depot beside it. */
function registerDemo(depot: Command): void {
  withOptions(depot.command('demo <dir>').description('make a complete self-signed demo/lab depot with synthetic binaries')).action(
    async (
      dir: string,
      opts: { release: Release; releases?: string[]; binarySize: number; signingDir?: string; esx?: boolean; force?: boolean; json?: boolean },
    ) => {
      const { makeDemoDepot, removeDemoLeftoversSync } = await import('../depot/demo.js');
      const result = await interruptible(
        `interrupted: ${dir} is half made; run the same command again to finish it (without --force).`,
        () => removeDemoLeftoversSync(dir),
        () =>
          withByteProgress('writing', !opts.json, (hooks) =>
            makeDemoDepot(dir, {
              release: opts.release,
              ...(opts.releases ? { releases: opts.releases } : {}),
              binarySize: opts.binarySize,
              force: opts.force,
              signingDir: opts.signingDir,
              esx: opts.esx,
              ...hooks,
            }),
          ),
      );
      if (opts.json) return printJson(result);
      if (result.tookOverLockFrom) printLines([formatTakeover(result.dir, result.tookOverLockFrom)]);
      printLines([
        `Made a ${result.releases.length > 1 ? `demo depot of releases ${result.releases.join(', ')}` : `${result.release} demo depot`} in ${result.dir}: ${plural(result.components.length, 'component')}, ${plural(result.binaries, 'binary', 'binaries')}, ${formatBytes(result.totalBytes)}.`,
        `Catalog signed with ${result.signingKey}; verify with: depotkit depot verify ${dir} --signing-cert ${result.signingPublicKey}`,
      ]);
      if (result.esx) {
        printLines([
          `Made a demo ESX depot in ${result.esx.dir}: ${plural(result.esx.vibs, 'VIB')}, ${formatBytes(result.esx.bytes)}; verify with: depotkit esx verify ${result.esx.dir}`,
          `Served, vSphere Lifecycle Manager's online depot is https://<host>:<port>/${UMDS_PATCH_STORE_DIR}/${result.esx.index}.`,
        ]);
      }
    },
  );
}

/** The run whose lock was taken over was killed, or the machine restarted: the user should know its work was cut short. */
export function formatTakeover(out: string, holder: DepotLockHolder): string {
  return `Took over the lock of ${out} from ${holder.operation} (process ${holder.pid} on ${holder.host}, since ${holder.startedAt}), which is gone: what it left was checked again.`;
}

export function formatVerifyResult(result: VerifyResult): string[] {
  const counts = countBySeverity(result.findings);
  const lines = result.findings.filter((f) => f.severity !== 'info' || f.id.startsWith('signature.')).flatMap(formatFinding);
  lines.push(...formatReleases(result.releases, result.grouping));
  if (result.selection !== undefined) lines.push(selectionLine(result.selection));
  lines.push(
    `${result.ok ? 'OK' : 'FAILED'}: ${result.dir}: ${result.stats.present}/${plural(result.stats.binaries, 'binary', 'binaries')} present with the right size (${formatBytes(result.stats.bytes)})` +
      `${result.stats.hashed ? `, ${result.stats.hashed} hashed` : ''}; ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}.`,
  );
  return lines;
}

export function formatBuildReport(report: BuildReport): string[] {
  const lines: string[] = [];
  const list = (
    label: string,
    entries: { path: string; source?: string; actualSize?: number; size: number }[],
    detail?: (e: (typeof entries)[number]) => string,
  ) => {
    if (entries.length === 0) return;
    lines.push(`${label}: ${entries.length}`);
    for (const e of entries.slice(0, 20)) lines.push(`  ${e.path}${detail ? ` ${detail(e)}` : ''}`);
    if (entries.length > 20) lines.push(`  ... and ${entries.length - 20} more (use --json for all)`);
  };
  if (report.tookOverLockFrom) lines.push(formatTakeover(report.out, report.tookOverLockFrom));
  lines.push(`Metadata: ${plural(report.metadata.written.length, 'file')} written, ${report.metadata.unchanged.length} unchanged.`);
  lines.push(...formatMetadataChange(report.metadataChange));
  if (report.metadata.ignored.length)
    lines.push(
      `  ${plural(report.metadata.ignored.length, 'file')} of the metadata source ${report.metadata.ignored.length === 1 ? 'is a binary' : 'are binaries'} the catalog names or temporary files: not laid out from there (e.g. ${report.metadata.ignored[0]}).`,
    );
  list('Placed', report.placed);
  list('Already in place', report.alreadyInPlace);
  list('Missing (not found under --binaries)', report.missing);
  list('Wrong size (not placed)', report.wrongSize, (e) => `is ${e.actualSize} bytes in ${e.source}, the catalog says ${e.size}`);
  list('Wrong checksum (not placed)', report.wrongChecksum, (e) => `from ${e.source}`);
  list('Different file already in place (use --force to replace)', report.conflicts);
  if (report.notInCatalog.length) lines.push(`Found but not in the catalog: ${plural(report.notInCatalog.length, 'file')} (ignored)`);
  if (!report.contentChecked && report.placed.length) lines.push(`Links were size-checked only; run: depotkit depot verify ${report.out} --deep`);
  // The binaries listed above are not repeated as verify's findings about the same paths.
  const listed = new Set([...report.missing, ...report.wrongSize, ...report.wrongChecksum, ...report.conflicts].map((e) => e.path));
  const findings = report.verify.findings.filter((f) => !(f.id.startsWith('binary.') && f.path !== undefined && listed.has(f.path)));
  // Errors and warnings only: verify's notes (e.g. how to check a signature) are in --json.
  lines.push(...findings.filter((f) => f.severity !== 'info').flatMap(formatFinding));
  const counts = countBySeverity(report.verify.findings);
  const checks = `depot verify's checks: ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}`;
  if (listed.size) lines.push(`INCOMPLETE: ${report.out} is missing binaries or has wrong ones (see above); ${checks}.`);
  else if (!report.verify.ok) lines.push(`FAILED: ${report.out} has every binary but fails ${checks} (see above).`);
  else lines.push(`OK: ${report.out} is complete; ${checks}.`);
  return lines;
}
