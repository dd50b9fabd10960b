import { withOptions } from './option-table.js';
import type { Command } from 'commander';
// The library is imported when a command runs, so that other commands start fast.
import { describeProductState } from '../esx/status.js';
import type { EsxImportResult } from '../esx/import.js';
import type { EsxVerifyResult } from '../esx/verify.js';
import { EXIT } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import type { EsxCheckResult } from '../check/esx.js';
import { registerEsxMirror } from './esx-mirror.js';
import { printJson, printLines } from './output.js';

export function registerEsxCommands(program: Command): void {
  const esx = program.command('esx').description('ESXi depots for vSphere Lifecycle Manager: verify, check, import, mirror');

  withOptions(
    esx.command('verify <path>').description('check ESX depots in a folder (umds-patch-store/, PROD/COMP/ESX_HOST/..., a UMDS store) or an offline bundle zip'),
  ).action(async (path: string, opts: { deep?: boolean; json?: boolean }) => {
    const { verifyEsx } = await import('../esx/verify.js');
    const result = await withByteProgress('hashing', !opts.json, (hooks) => verifyEsx(path, { deep: opts.deep, ...hooks }));
    if (opts.json) printJson(result);
    else printLines(formatEsxVerifyResult(result));
    process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
  });

  registerEsxCheck(esx);

  withOptions(
    esx.command('import <bundle...>').description('unpack offline bundles (*-depot.zip) into one ESX depot served from one URL, every VIB checked as it lands'),
  ).action(async (bundles: string[], opts: { out: string; force?: boolean; json?: boolean }) => {
    const { importBundles } = await import('../esx/import.js');
    const result = await withByteProgress('importing', !opts.json, (hooks) => importBundles(bundles, opts.out, { force: opts.force, ...hooks }));
    if (opts.json) printJson(result);
    else printLines(formatEsxImportResult(result));
    process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
  });

  registerEsxMirror(esx);
}

function registerEsxCheck(esx: Command): void {
  withOptions(
    esx
      .command('check <index-url>')
      .description('check an ESX depot over the network as vSphere Lifecycle Manager reads it (TLS trust, host name, every index, metadata zip and VIB)'),
  ).action(async (url: string, opts: { ca: string[]; asHost?: string; deep?: boolean; concurrency: number; timeout: number; json?: boolean }) => {
    const [{ checkEsxDepot }, { readCaPems }] = await Promise.all([import('../check/esx.js'), import('../cert/trust-source.js')]);
    const caPems = await readCaPems(opts.ca);
    const result = await withByteProgress('downloading', !opts.json, (hooks) =>
      checkEsxDepot(url, { caPems, asHost: opts.asHost, deep: opts.deep, concurrency: opts.concurrency, timeoutMs: opts.timeout * 1000, ...hooks }),
    );
    if (opts.json) printJson(result);
    else printLines(formatEsxCheckResult(result));
    process.exitCode = result.accepted ? EXIT.ok : EXIT.problems;
  });
}

export function formatEsxCheckResult(result: EsxCheckResult): string[] {
  const lines = [`ESX depot ${result.url}`];
  if (result.tls) lines.push(`  TLS ${result.tls.protocol}; certificate ${result.tls.subject}, issued by ${result.tls.issuer}; SHA-256 ${result.tls.sha256}`);
  for (const product of result.products) lines.push(`  ${product.productId} ${product.version}: ${describeProductState(product)}`);
  lines.push(...result.findings.flatMap(formatFinding));
  const counts = countBySeverity(result.findings);
  lines.push(
    result.accepted
      ? `ACCEPT: vSphere Lifecycle Manager would take this depot: ${result.stats.present}/${plural(result.stats.vibs, 'VIB')} served (${plural(counts.warning, 'warning')}).`
      : `REJECT: vSphere Lifecycle Manager would not take this depot ("A depot is inaccessible or has invalid contents"): ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}.`,
  );
  return lines;
}

export function formatEsxImportResult(result: EsxImportResult): string[] {
  const lines = result.findings.flatMap(formatFinding);
  for (const bundle of result.bundles) {
    const products = bundle.products.map((p) => `${p.productId} ${p.version}`).join(', ');
    const kept = bundle.kept ? `, ${bundle.kept} already there` : '';
    lines.push(
      `${bundle.bundle} -> ${bundle.folder}: ${products || 'no product'}; ${plural(bundle.vibs, 'VIB')} (${formatBytes(bundle.bytes)} written${kept})`,
    );
  }
  const counts = countBySeverity(result.findings);
  const url = `https://<depot-host>:<port>/<path to ${result.out}>/${result.index}`;
  lines.push(`${result.ok ? 'OK' : 'FAILED'}: ${plural(result.bundles.length, 'bundle')} imported into ${result.out}; ${plural(counts.error, 'error')}.`);
  if (result.bundles.length > 0) lines.push(`vLCM's online depot URL is that of ${result.index}: ${url}`);
  return lines;
}

export function formatEsxVerifyResult(result: EsxVerifyResult): string[] {
  const lines = result.findings.flatMap(formatFinding);
  for (const depot of result.depots) {
    const kind = depot.kind === 'umds' ? 'UMDS patch store' : depot.kind === 'bundle' ? 'offline bundle' : 'online depot';
    lines.push(`${depot.folder || '.'}: ${kind}, ${depot.index}`);
    for (const product of depot.products) {
      const name = product.productId ? `${product.productId} ${product.version}` : product.metadata;
      lines.push(`  ${name}: ${describeProductState(product)}`);
    }
  }
  const vibs = result.depots.reduce((sum, d) => sum + d.stats.vibs, 0);
  const present = result.depots.reduce((sum, d) => sum + d.stats.present, 0);
  const bytes = result.depots.reduce((sum, d) => sum + d.stats.bytes, 0);
  const hashed = result.depots.reduce((sum, d) => sum + d.stats.hashed, 0);
  const counts = countBySeverity(result.findings);
  lines.push(
    `${result.ok ? 'OK' : 'FAILED'}: ${result.path}: ${plural(result.depots.length, 'ESX depot')}, ${present}/${plural(vibs, 'VIB')} present with the right size (${formatBytes(bytes)})` +
      `${hashed ? `, ${hashed} hashed` : ''}; ${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}.`,
  );
  return lines;
}
