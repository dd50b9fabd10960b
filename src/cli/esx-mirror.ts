import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import { describeProductState } from '../esx/status.js';
import type { EsxMirrorReport } from '../transfer/esx-mirror/index.js';
import { EXIT } from '../util/errors.js';
import { formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { readSecret } from '../util/secrets.js';
import { plural } from '../util/text.js';
import { type ProxyFlags, readProxyOptions, warnIfExposed } from './options.js';
import { printJson, printLines } from './output.js';
import { formatFileFailures, formatProxy } from './transfer-mirror.js';
import { tookOverLine } from './transfer-shared.js';

interface EsxMirrorFlags extends ProxyFlags {
  out: string;
  ca: string[];
  tokenFile?: string;
  tokenEnv?: string;
  concurrency: number;
  timeout: number;
  minSpeed: number;
  product: string[];
  productVersion: string[];
  expect?: string;
  force?: boolean;
  json?: boolean;
}

/** The token from its file or variable; never from the command line, where `ps` and the shell's history would show it. */
async function readToken(flags: EsxMirrorFlags): Promise<string | undefined> {
  if (flags.tokenFile !== undefined) await warnIfExposed(flags.tokenFile);
  if (flags.tokenFile === undefined && flags.tokenEnv === undefined) return undefined;
  return readSecret({ file: flags.tokenFile, env: flags.tokenEnv }, 'download token');
}

/** `esx mirror`: an ESX depot fetched from the URL of its root index. */
export function registerEsxMirror(esx: Command): void {
  const command = withOptions(
    esx
      .command('mirror <index-url>')
      .description("mirror an ESX depot from its root index's URL: indexes and metadata, then every VIB, checked as it lands, resumable"),
  );
  command.action(async (url: string, opts: EsxMirrorFlags) => {
    const token = await readToken(opts);
    const proxy = await readProxyOptions(opts);
    const [{ mirrorEsx }, { readCaPems }] = await Promise.all([import('../transfer/esx-mirror/index.js'), import('../cert/trust-source.js')]);
    const caPems = opts.ca.length ? await readCaPems(opts.ca) : undefined;
    const report = await withByteProgress('downloading', !opts.json, (hooks) =>
      mirrorEsx({
        url,
        token,
        out: opts.out,
        caPems,
        concurrency: opts.concurrency,
        timeoutMs: opts.timeout * 1000,
        minBytesPerSecond: opts.minSpeed,
        force: opts.force,
        select: { products: opts.product, versions: opts.productVersion },
        expectSeal: opts.expect,
        ...proxy,
        ...hooks,
      }),
    );
    if (opts.json) printJson(report);
    else printLines(formatEsxMirrorReport(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
  });
}

export function formatEsxMirrorReport(r: EsxMirrorReport): string[] {
  const resumed = r.downloaded.filter((d) => d.resumedFrom).length;
  const lines = [
    `Mirrored ${r.url} into ${r.out}: ${plural(r.downloaded.length, 'VIB')} downloaded (${formatBytes(r.bytesDownloaded)}${resumed ? `, ${resumed} resumed` : ''}), ${r.alreadyInPlace.length} already in place.`,
    ...formatProxy(r.proxy),
    ...tookOverLine(r.lock.tookOverFrom),
  ];
  if (r.selection) {
    lines.push(
      `Chosen: ${r.selection.chosen.join(', ')}; left out: ${plural(r.selection.leftOut.vibs, 'VIB')} (${formatBytes(r.selection.leftOut.bytes)}) that only other products list.`,
    );
  }
  lines.push(...r.findings.flatMap(formatFinding));
  for (const p of r.products) lines.push(`  ${p.productId} ${p.version}: ${describeProductState(p)}`);
  lines.push(...formatFileFailures(r));
  lines.push(
    r.metadata.held
      ? 'Indexes and metadata not put in place: they would name files that are not here. Run the same command again to resume; what is in place is kept.'
      : `Metadata: ${r.metadata.written.length} written, ${r.metadata.unchanged.length} unchanged.`,
  );
  lines.push(
    r.vouchedBy === 'seal'
      ? `Seal: ${r.seal}, as the seal given (--expect) says: the indexes and metadata, and through them every VIB, are the ones vouched for.`
      : `Seal of the source: ${r.seal}. Only the source vouched for its metadata: compare this seal with the one written down at the other site (or give it with --expect).`,
  );
  lines.push(r.ok ? `OK: ${r.out} holds the depot; vLCM's online depot URL is that of ${r.index} there.` : 'INCOMPLETE: run the same command again to resume.');
  return lines;
}
