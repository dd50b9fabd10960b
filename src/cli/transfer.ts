import { Option, type Command } from 'commander';
import {
  PACK_DEFAULT_VOLUME_PRESET,
  PACK_MANIFEST_FILE,
  PACK_MANIFEST_SIG_FILE,
  PACK_SUMS_FILE,
  PACK_VOLUME_PRESETS,
  VCENTER_UPGRADE_METADATA_DIR,
} from '../constants.js';
import type { DepotLockHolder } from '../depot/lock.js';
import type { DiffReport } from '../transfer/diff.js';
import type { MirrorReport } from '../transfer/mirror.js';
import type { PackReport } from '../transfer/pack.js';
import type { PruneReport } from '../transfer/prune.js';
import type { ReleaseStatus } from '../transfer/releases.js';
import type { UnpackReport } from '../transfer/unpack.js';
import { MIRROR_DEFAULTS } from '../transfer/defaults.js';
import { EXIT } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import {
  concurrencyOption,
  depotUserPassword,
  expectSealOption,
  forceOption,
  jsonOption,
  passwordEnvOption,
  passwordFileOption,
  timeoutOption,
  trustOption,
  warnIfExposed,
  wholeNumber,
} from './options.js';
import { parseByteSize, printJson, printLines } from './output.js';

// Libraries are imported when a command runs, so that every other command starts fast.
const transfer = () => import('../transfer/index.js');

/** A byte size (512M, 4G) or a named one (fat32). */
function parseVolumeSize(value: string): number {
  const preset = PACK_VOLUME_PRESETS[value.toLowerCase()];
  return preset ?? parseByteSize(value);
}

async function readSigningCert(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  const { readPemFile } = await import('../pki/pem.js');
  return (await readPemFile(file, ['CERTIFICATE', 'PUBLIC KEY'])).join('');
}

/** The private key that signs a pack's manifest; a key others can read is said so, as for password files. */
async function readSigningKey(file: string | undefined): Promise<string | undefined> {
  if (!file) return undefined;
  await warnIfExposed(file);
  const { readPemFile } = await import('../pki/pem.js');
  return (await readPemFile(file, ['PRIVATE KEY', 'EC PRIVATE KEY'])).join('');
}

/** Registers pack, unpack, mirror, prune and diff under `depot`. */
export function registerTransferCommands(depot: Command): void {
  depot
    .command('pack <depot-dir>')
    .description('write a depot (or what an older one lacks) as volumes for media with size limits, with a manifest and SHA256SUMS')
    .requiredOption('--out <dir>', 'the folder for the volumes, the manifest and SHA256SUMS (e.g. the removable medium)')
    .addOption(
      new Option(
        '--volume-size <size>',
        `largest volume: bytes, 700M, 4G... or ${Object.keys(PACK_VOLUME_PRESETS).join(', ')} (4 GiB - 512: FAT32 files hold at most 4 GiB - 1)`,
      )
        .argParser(parseVolumeSize)
        .default(PACK_VOLUME_PRESETS[PACK_DEFAULT_VOLUME_PRESET], PACK_DEFAULT_VOLUME_PRESET),
    )
    .option('--since <old>', "a depot folder or an earlier pack's manifest: pack only what it lacks or has different (a new release's delta)")
    .option('--signing-key <pem>', `an ECDSA P-256 private key (e.g. depot demo's signing-key.pem) that signs the manifest, into ${PACK_MANIFEST_SIG_FILE}`)
    .option('--seal-out <file>', 'also write the seal to this file (never inside --out: the seal travels apart from the media)')
    .addOption(forceOption('replace an earlier pack in --out (and the --seal-out file)'))
    .addOption(jsonOption('print the report as JSON'))
    .action(
      async (
        dir: string,
        opts: { out: string; volumeSize: number; since?: string; signingKey?: string; sealOut?: string; force?: boolean; json?: boolean },
      ) => {
        const signingKeyPem = await readSigningKey(opts.signingKey);
        const { packDepot } = await transfer();
        const report = await withByteProgress('packing', !opts.json, (hooks) =>
          packDepot({
            depot: dir,
            out: opts.out,
            volumeSize: opts.volumeSize,
            since: opts.since,
            force: opts.force,
            signingKeyPem,
            sealFile: opts.sealOut,
            ...hooks,
          }),
        );
        if (opts.json) printJson(report);
        else printLines(formatPackReport(report));
        process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
      },
    );

  depot
    .command('unpack <media-dir...>')
    .description("check a pack's volumes and place its files in a depot (resumable; a delta onto its base gives the new depot)")
    .requiredOption('--out <depot-dir>', 'the depot root to place the files in')
    .addOption(forceOption("replace different files in a depot that is neither the pack's source nor its base"))
    .addOption(expectSealOption('media'))
    .option(
      '--pack-signing-cert <pem>',
      `public key or certificate of the key that signed the pack (pack --signing-key): ${PACK_MANIFEST_SIG_FILE} must verify with it before anything is placed`,
    )
    .option(
      '--signing-cert <pem>',
      "public key or certificate that signed a depotkit-made catalog (for the final checks; the pack's own signature is --pack-signing-cert)",
    )
    .addOption(jsonOption('print the report as JSON'))
    .action(
      async (media: string[], opts: { out: string; force?: boolean; expect?: string; packSigningCert?: string; signingCert?: string; json?: boolean }) => {
        const signingCertPem = await readSigningCert(opts.signingCert);
        const packSigningCertPem = await readSigningCert(opts.packSigningCert);
        const { unpackDepot } = await transfer();
        const report = await withByteProgress('unpacking', !opts.json, (hooks) =>
          unpackDepot({ media, out: opts.out, force: opts.force, expect: opts.expect, packSigningCertPem, signingCertPem, ...hooks }),
        );
        if (opts.json) printJson(report);
        else printLines(formatUnpackReport(report));
        process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
      },
    );

  depot
    .command('mirror <url>')
    .description('replicate a served depot over HTTPS: metadata, then every binary its catalog names, in parallel, resumable, verified')
    .requiredOption('--out <depot-dir>', 'the local depot root')
    .addOption(trustOption('--ca', "a CA to trust, or a folder of certificates; Node's public roots without it"))
    .option('--user <name>', 'the depot user')
    .addOption(passwordFileOption("the depot user's"))
    .addOption(passwordEnvOption("the depot user's"))
    .option('--allow-http-credentials', 'send the password over plain HTTP (http:// URLs)')
    .addOption(concurrencyOption(MIRROR_DEFAULTS.concurrency, 'binaries downloaded at once'))
    .addOption(timeoutOption(MIRROR_DEFAULTS.timeoutMs, 'idle time allowed for an answer or between its bytes; also the span --min-speed is judged over'))
    .option(
      '--min-speed <bytes-per-second>',
      'slowest average speed over --timeout before a download is given up (as curl --speed-limit)',
      wholeNumber('--min-speed', { min: 1 }),
      MIRROR_DEFAULTS.minBytesPerSecond,
    )
    .addOption(expectSealOption('a source whose catalog'))
    .addOption(forceOption('mirror into a folder holding another depot'))
    .option('--signing-cert <pem>', 'public key or certificate that signed a depotkit-made catalog (for the final checks)')
    .addOption(jsonOption('print the report as JSON'))
    .action(
      async (
        url: string,
        opts: {
          out: string;
          ca: string[];
          user?: string;
          passwordFile?: string;
          passwordEnv?: string;
          allowHttpCredentials?: boolean;
          concurrency: number;
          timeout: number;
          minSpeed: number;
          expect?: string;
          force?: boolean;
          signingCert?: string;
          json?: boolean;
        },
      ) => {
        const password = await depotUserPassword(opts.user, opts);
        const signingCertPem = await readSigningCert(opts.signingCert);
        const [{ mirrorDepot }, { readCaPems }] = await Promise.all([transfer(), import('../pki/trust-source.js')]);
        const caPems = opts.ca.length ? await readCaPems(opts.ca) : undefined;
        const report = await withByteProgress('downloading', !opts.json, (hooks) =>
          mirrorDepot({
            url,
            out: opts.out,
            caPems,
            user: opts.user,
            password,
            allowHttpCredentials: opts.allowHttpCredentials,
            concurrency: opts.concurrency,
            timeoutMs: opts.timeout * 1000,
            minBytesPerSecond: opts.minSpeed,
            expectSeal: opts.expect,
            force: opts.force,
            signingCertPem,
            ...hooks,
          }),
        );
        if (opts.json) printJson(report);
        else printLines(formatMirrorReport(report));
        process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
      },
    );

  depot
    .command('prune <depot-dir>')
    .description('list binaries the catalog no longer names and temporary files of killed runs; remove them with --yes')
    .option('--yes', "remove them, holding the depot's lock (without it, only list them)")
    .addOption(jsonOption('print the report as JSON'))
    .action(async (dir: string, opts: { yes?: boolean; json?: boolean }) => {
      await (await import('../depot/demo.js')).refuseUnfinishedDemo(dir);
      const { pruneDepot } = await transfer();
      const report = await pruneDepot(dir, { yes: opts.yes });
      if (opts.json) printJson(report);
      else printLines(formatPruneReport(report));
    });

  depot
    .command('diff <old> <new>')
    .description('what a new depot, metadata archive or pack manifest adds, changes and drops, and the bytes to download and carry')
    .addOption(jsonOption('print the report as JSON'))
    .action(async (older: string, newer: string, opts: { json?: boolean }) => {
      const { diffDepots } = await transfer();
      const report = await diffDepots(older, newer);
      if (opts.json) printJson(report);
      else printLines(formatDiffReport(report));
    });
}

function listed(label: string, items: string[], max = 20): string[] {
  if (items.length === 0) return [];
  const lines = [`${label}: ${items.length}`, ...items.slice(0, max).map((i) => `  ${i}`)];
  if (items.length > max) lines.push(`  ... and ${items.length - max} more (use --json for all)`);
  return lines;
}

function formatReleases(releases: ReleaseStatus[]): string[] {
  return releases.map((r) =>
    r.complete
      ? `Release ${r.version}: complete (${plural(r.binaries, 'binary', 'binaries')}).`
      : `Release ${r.version}: ${r.present}/${r.binaries} binaries present; ${r.missing.length} missing (${formatBytes(r.missingBytes)}).`,
  );
}

export function formatPackReport(r: PackReport): string[] {
  const lines = [
    `Packed ${plural(r.files, 'file')} (${formatBytes(r.bytes)}) from ${r.depot} into ${r.volumes.length} volume${r.volumes.length === 1 ? '' : 's'} of at most ${formatBytes(r.volumeSize)} in ${r.out}.`,
  ];
  if (r.delta)
    lines.push(
      `A delta against ${r.since?.source}: ${plural(r.unchanged.files, 'file')} (${formatBytes(r.unchanged.bytes)}) it already has ${r.unchanged.files === 1 ? 'was' : 'were'} left out; ${r.removed.length} of its files ${r.removed.length === 1 ? 'is' : 'are'} no longer in this depot.`,
    );
  for (const v of r.volumes) lines.push(`  ${v.name}  ${formatBytes(v.size)}  ${v.sha256}`);
  lines.push(
    ...listed(
      'Missing from the depot (not packed)',
      r.missing.map((m) => m.path),
    ),
  );
  lines.push(
    ...listed(
      'Wrong size (not packed)',
      r.wrongSize.map((w) => `${w.path} is ${w.actualSize} bytes, the catalog says ${w.size}`),
    ),
  );
  lines.push(
    ...listed(
      'Wrong content (packed, flagged: unpack will not place them)',
      r.wrongChecksum.map((w) => `${w.path} SHA-256 ${w.actual}`),
    ),
  );
  if (r.strays.length)
    lines.push(
      `${plural(r.strays.length, 'file')} in component folders that the catalog does not name ${r.strays.length === 1 ? 'was' : 'were'} not packed (depotkit depot prune lists them).`,
    );
  lines.push(`Check on any machine: cd ${r.out} && sha256sum -c ${PACK_SUMS_FILE}. Carry every volume with ${PACK_MANIFEST_FILE} and ${PACK_SUMS_FILE}.`);
  if (r.signature) lines.push(`Signed: ${r.signature.path} (key ${r.signature.signerSpkiSha256}); unpack checks it with --pack-signing-cert.`);
  lines.push(`Seal: ${r.seal}`);
  lines.push(
    `Carry the seal apart from the media (a change ticket, a phone call${r.sealFile ? `; written to ${r.sealFile}` : ''}): unpack --expect refuses media that do not match it.`,
  );
  lines.push(
    r.ok
      ? 'OK: every binary the catalog names was packed with the right content.'
      : 'INCOMPLETE: the depot is missing binaries or has wrong ones (see above); the pack carries the rest.',
  );
  return lines;
}

/** A lock left by a run that is gone, taken over: said, since that run may have left work half done. */
function tookOverLine(took: DepotLockHolder | undefined): string[] {
  return took
    ? [`The depot's lock was left by ${took.operation} (process ${took.pid} on ${took.host}, since ${took.startedAt}), which is gone: taken over.`]
    : [];
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

function vouchLine(r: UnpackReport): string {
  switch (r.vouchedBy) {
    case 'seal':
      return `The seal given matches (${r.seal}): the catalog and the manifest are the ones packed.`;
    case 'signature':
      return `The pack's signature verifies with the key given: the manifest, and through it the catalog, are the ones packed.`;
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
  if (r.stale.length)
    lines.push(
      `${plural(r.stale.length, 'file')} the pack's source no longer has ${r.stale.length === 1 ? 'is' : 'are'} still here: depotkit depot prune ${r.out} lists them.`,
    );
  lines.push(...formatReleases(r.releases));
  // A binary missing because its volume is: the fix is the media, not a download and a build.
  const fromMedia = new Set(r.failed.map((f) => f.path));
  const findings = r.verify.findings.map((f) =>
    f.id === 'binary.missing' && f.path !== undefined && fromMedia.has(f.path)
      ? { ...f, fix: 'It is on the media: supply the volume named above and run the same unpack again (what is in place is kept).' }
      : f,
  );
  lines.push(...findings.filter((f) => f.severity !== 'info').flatMap(formatFinding));
  if (r.catalogFrom === 'depot') lines.push("The pack carries no catalog: its binaries were held to the depot's, the one the pack was made from.");
  lines.push(vouchLine(r));
  const counts = countBySeverity(r.verify.findings);
  if (r.ok) lines.push(`OK: ${r.out} is complete; depot verify's checks: ${counts.error} errors, ${counts.warning} warnings.`);
  else if (r.failed.length || r.volumes.some((v) => v.state !== 'ok' && v.state !== 'ranges' && v.state !== 'not-needed'))
    lines.push(`INCOMPLETE: fix the volumes named above and run the same command again: what is in place is kept.`);
  else lines.push(`FAILED: every file is in place but ${r.out} fails depot verify's checks: ${counts.error} errors, ${counts.warning} warnings (see above).`);
  return lines;
}

export function formatMirrorReport(r: MirrorReport): string[] {
  const lines: string[] = [];
  lines.push(
    `Mirrored ${r.url} into ${r.out}: ${plural(r.downloaded.length, 'binary', 'binaries')} downloaded (${formatBytes(r.bytesDownloaded)}${r.downloaded.some((d) => d.resumedFrom) ? `, ${r.downloaded.filter((d) => d.resumedFrom).length} resumed` : ''}), ${r.alreadyInPlace.length} already in place.`,
  );
  lines.push(...tookOverLine(r.lock.tookOverFrom));
  lines.push(`Metadata: ${r.metadata.written.length} written, ${r.metadata.unchanged.length} unchanged.`);
  const where = r.upgradeMetadata.source === 'status' ? "the server's status" : "the server's listing of the folder";
  lines.push(
    r.upgradeMetadata.source === 'none'
      ? `vCenter upgrade metadata (${VCENTER_UPGRADE_METADATA_DIR}/): the server lists none, so whatever its depot has of it is not in this mirror. Mirror from depotkit serve, or let the server list that folder.`
      : r.upgradeMetadata.files === 0
        ? `vCenter upgrade metadata: none (${where} names none).`
        : `vCenter upgrade metadata: ${plural(r.upgradeMetadata.files, 'file')}, found in ${where}.`,
  );
  lines.push(...listed('Not on the server (the installer reads them)', r.metadata.missing));
  lines.push(
    ...listed(
      'Failed',
      r.failed.map((f) => `${f.path}: ${f.reason}`),
    ),
  );
  lines.push(
    ...listed(
      'Partial downloads that were not its own files (removed, not followed, downloaded again)',
      r.replacedPartials.map((p) => `${p.path}: ${p.found}`),
    ),
  );
  if (r.metadata.held) lines.push("The server's metadata was not put in place: binaries it names failed, so the depot keeps its own. Run mirror again.");
  if (r.stale)
    lines.push(
      `${plural(r.stale, 'file')} in component folders ${r.stale === 1 ? 'is' : 'are'} no longer named by the catalog: depotkit depot prune ${r.out} lists them.`,
    );
  lines.push(...formatReleases(r.releases));
  lines.push(...r.verify.findings.filter((f) => f.severity !== 'info').flatMap(formatFinding));
  const counts = countBySeverity(r.verify.findings);
  lines.push(
    r.ok
      ? `OK: ${r.out} is complete; depot verify's checks: ${counts.error} errors, ${counts.warning} warnings.`
      : `INCOMPLETE: run the same command again to resume; what is in place is kept.`,
  );
  lines.push(
    r.vouchedBy === 'seal'
      ? `Seal: ${r.seal}, as the seal given (--expect) says: the catalog, and through it every binary, is the one vouched for.`
      : `Seal of the source: ${r.seal}. Only the source vouched for its catalog: compare this seal with the one written down at the other site (or give it with --expect).`,
  );
  return lines;
}

export function formatPruneReport(r: PruneReport): string[] {
  if (r.candidates.length === 0) return [...tookOverLine(r.lock?.tookOverFrom), `Nothing to prune in ${r.depot}.`];
  const kinds = { stale: 'not named by the catalog', temporary: 'temporary file of a killed run', partial: 'partial download (a mirror resumes it)' };
  const lines = r.candidates.slice(0, 50).map((c) => `  ${c.path}  ${formatBytes(c.size)}  ${kinds[c.kind]}`);
  if (r.candidates.length > 50) lines.push(`  ... and ${r.candidates.length - 50} more (use --json for all)`);
  lines.unshift(`${r.removed ? 'Removed' : 'Would remove'} ${plural(r.candidates.length, 'file')}, ${formatBytes(r.bytes)}, from ${r.depot}:`);
  lines.unshift(...tookOverLine(r.lock?.tookOverFrom));
  if (!r.removed) lines.push(`Nothing was removed; run again with --yes to remove them.`);
  return lines;
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
  lines.push(
    `To download: ${formatBytes(r.bytes.download)}; to carry across (pack --since): ${formatBytes(r.bytes.carry)}; freed by prune: ${formatBytes(r.bytes.dropped)}.`,
  );
  return lines;
}
