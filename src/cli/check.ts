import { withOptions } from './option-table.js';
import type { Command } from 'commander';
import type { CheckResult } from '../check/check.js';
import { EXIT, usageError } from '../util/errors.js';
import { countBySeverity, formatFinding } from '../util/findings.js';
import { formatBytes, withByteProgress } from '../util/progress.js';
import { plural } from '../util/text.js';
import { depotUserPassword } from './options.js';
import { printJson, printLines } from './output.js';
import { formatReleases, selectionLine } from './release-lines.js';
import { selectOptionsOf } from './transfer-shared.js';

interface CheckCliOptions {
  ca: string[];
  user?: string;
  passwordFile?: string;
  passwordEnv?: string;
  asHost?: string;
  allowHttpCredentials?: boolean;
  openPath: string[];
  deep?: boolean;
  concurrency: number;
  timeout: number;
  json?: boolean;
  release: string[];
  component: string[];
  imageType?: string;
}

export function registerCheckCommand(program: Command): void {
  const command = withOptions(program.command('check <depot-url>').description('check a depot as the installer does: TLS, host name, auth, catalog, binaries'));
  // A depot cut to a selection (its status page prints these): a binary left out is said, not an error.
  command.action(async (url: string, opts: CheckCliOptions) => {
    if (opts.openPath.length > 0 && opts.user === undefined)
      throw usageError('--open-path needs --user: without credentials every request of the check is already anonymous.');
    const { normaliseOpenPrefix } = await import('../server/paths.js');
    const openPaths = opts.openPath.map((p) => normaliseOpenPrefix(p, '--open-path') + (p.endsWith('/') ? '/' : ''));
    const password = await depotUserPassword(opts.user, opts);
    // Imported here so that the CLI starts fast for every other command.
    const [{ checkDepot }, { readCaPems }] = await Promise.all([import('../check/check.js'), import('../cert/trust-source.js')]);
    const caPems = await readCaPems(opts.ca);
    const result = await withByteProgress('downloading', !opts.json, (hooks) =>
      checkDepot(url, {
        caPems,
        user: opts.user,
        password,
        asHost: opts.asHost,
        allowHttpCredentials: opts.allowHttpCredentials,
        openPaths,
        deep: opts.deep,
        concurrency: opts.concurrency,
        timeoutMs: opts.timeout * 1000,
        selection: selectOptionsOf(opts),
        ...hooks,
      }),
    );
    if (opts.json) printJson(result);
    else printLines(formatCheckResult(result));
    process.exitCode = result.accepted ? EXIT.ok : EXIT.problems;
  });
}

export function formatCheckResult(result: CheckResult): string[] {
  const lines: string[] = [`Depot ${result.base}`];
  if (result.tls) {
    lines.push(`  TLS ${result.tls.protocol} ${result.tls.cipher}; certificate ${result.tls.subject}, issued by ${result.tls.issuer}`);
    lines.push(`  SAN DNS: ${result.tls.dnsNames.join(', ') || '(none)'}; IP: ${result.tls.ipAddresses.join(', ') || '(none)'}; SHA-256 ${result.tls.sha256}`);
  }
  if (result.stats.binaries) {
    lines.push(
      `  ${result.stats.checked}/${plural(result.stats.binaries, 'binary', 'binaries')} checked (${formatBytes(result.stats.bytes)} with the right size)${result.stats.hashed ? `, ${result.stats.hashed} downloaded and hashed` : ''}`,
    );
  }
  lines.push(...result.findings.flatMap(formatFinding));
  lines.push(...formatReleases(result.releases, result.grouping));
  if (result.selection !== undefined) lines.push(selectionLine(result.selection, result.selectionRecorded));
  const counts = countBySeverity(result.findings);
  lines.push(
    result.accepted
      ? `ACCEPT: the installer would accept this depot (${plural(counts.warning, 'warning')}).`
      : `REJECT: the installer would not accept this depot (${plural(counts.error, 'error')}, ${plural(counts.warning, 'warning')}).`,
  );
  return lines;
}
