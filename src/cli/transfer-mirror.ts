import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import { VCENTER_UPGRADE_METADATA_DIR } from '../constants.js';
import type { MirrorReport } from '../transfer/mirror.js';
import type { FilesTally } from '../transfer/mirror/binaries.js';
import { EXIT } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { type ProxyFlags, depotUserPassword, readProxyOptions } from './options.js';
import { printJson, printLines } from './output.js';
import {
  formatHclGuard,
  formatMetadataChange,
  formatReleases,
  formatSelection,
  listed,
  readSigningCert,
  selectOptionsOf,
  tookOverLine,
  transfer,
} from './transfer-shared.js';

/** `depot mirror`: a served depot replicated over HTTPS. */
export function registerMirror(depot: Command): void {
  const command = withOptions(
    depot
      .command('mirror <url>')
      .description('replicate a served depot over HTTPS: metadata, then every binary its catalog names, in parallel, resumable, verified'),
  );
  command.action(
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
        release: string[];
        component: string[];
        imageType?: string;
      } & ProxyFlags,
    ) => {
      const password = await depotUserPassword(opts.user, opts);
      const proxy = await readProxyOptions(opts);
      const signingCertPem = await readSigningCert(opts.signingCert);
      const [{ mirrorDepot }, { readCaPems }] = await Promise.all([transfer(), import('../cert/trust-source.js')]);
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
          select: selectOptionsOf(opts),
          ...proxy,
          ...hooks,
        }),
      );
      if (opts.json) printJson(report);
      else printLines(formatMirrorReport(report));
      process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
    },
  );
}

export function formatMirrorReport(r: MirrorReport): string[] {
  const lines: string[] = [];
  lines.push(
    `Mirrored ${r.url} into ${r.out}: ${plural(r.downloaded.length, 'binary', 'binaries')} downloaded (${formatBytes(r.bytesDownloaded)}${r.downloaded.some((d) => d.resumedFrom) ? `, ${r.downloaded.filter((d) => d.resumedFrom).length} resumed` : ''}), ${r.alreadyInPlace.length} already in place.`,
  );
  lines.push(...formatProxy(r.proxy));
  lines.push(...formatSelection(r.selection));
  lines.push(...tookOverLine(r.lock.tookOverFrom));
  lines.push(`Metadata: ${r.metadata.written.length} written, ${r.metadata.unchanged.length} unchanged.`);
  lines.push(...formatMetadataChange(r.metadataChange));
  lines.push(...formatHclGuard(r.hcl, "the server's"));
  const where = r.upgradeMetadata.source === 'status' ? "the server's status" : "the server's listing of the folder";
  lines.push(
    r.upgradeMetadata.source === 'none'
      ? `vCenter upgrade metadata (${VCENTER_UPGRADE_METADATA_DIR}/): the server lists none, so whatever its depot has of it is not in this mirror. Mirror from depotkit serve, or let the server list that folder.`
      : r.upgradeMetadata.files === 0
        ? `vCenter upgrade metadata: none (${where} names none).`
        : `vCenter upgrade metadata: ${plural(r.upgradeMetadata.files, 'file')}, found in ${where}.`,
  );
  lines.push(...listed('Not on the server (the installer reads them)', r.metadata.missing));
  lines.push(...formatFileFailures(r));
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
      ? `OK: ${r.out} ${r.selection ? 'holds every binary this mirror chose' : 'is complete'}; depot verify's checks: ${counts.error} errors, ${counts.warning} warnings.`
      : `INCOMPLETE: run the same command again to resume; what is in place is kept.`,
  );
  lines.push(
    r.vouchedBy === 'seal'
      ? `Seal: ${r.seal}, as the seal given (--expect) says: the catalog, and through it every binary, is the one vouched for.`
      : `Seal of the source: ${r.seal}. Only the source vouched for its catalog: compare this seal with the one written down at the other site (or give it with --expect).`,
  );
  return lines;
}

/** The files that failed, and the partial downloads whose names held something else. */
export function formatFileFailures(r: Pick<FilesTally, 'failed' | 'replacedPartials'>): string[] {
  return [
    ...listed(
      'Failed',
      r.failed.map((f) => `${f.path}: ${f.reason}`),
    ),
    ...listed(
      'Partial downloads that were not its own files (removed, not followed, downloaded again)',
      r.replacedPartials.map((p) => `${p.path}: ${p.found}`),
    ),
  ];
}

/** The proxy that was named, and whether the depot was reached through it. */
export function formatProxy(proxy: MirrorReport['proxy']): string[] {
  if (!proxy) return [];
  const named = (from: string) => (from === 'proxy' || from === 'noProxy' ? `\`${from}\`` : from);
  return [
    proxy.bypassedBy
      ? `Not through the proxy ${proxy.url} (${named(proxy.from)}): ${proxy.bypassedBy.entry} in ${named(proxy.bypassedBy.from)} names the depot.`
      : `Through the proxy ${proxy.url} (${named(proxy.from)}).`,
  ];
}
