import { withOptions } from './option-table.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { EXPORT_TARGETS, type ExportTarget } from '../constants.js';
// The library loads when the command runs (the CLI starts fast).
import type { ExportOptions, ExportReport } from '../export/index.js';
import { usageError } from '../util/errors.js';
import { type ServeOptionValues, basicAuthFrom } from './options.js';
import { printJson, printLines, warn } from './output.js';
import { inCommandLineWords } from './wording.js';

interface ExportCliOptions extends ServeOptionValues {
  out: string;
  name: string;
  serverName?: string;
  statusPage?: boolean;
  group?: string;
  caddyVersion?: string;
  exec?: string;
  serviceUser?: string;
  force?: boolean;
}

export function registerExportCommand(program: Command): void {
  withOptions(
    program
      .command('export')
      .description('write nginx, Apache or Caddy configuration, or a systemd unit, serving a depot')
      .argument('<server>', EXPORT_TARGETS.join(', '))
      .argument('<depot-dir>', 'the web root: the folder that contains PROD/'),
  ).action(exportCommand);
}

async function exportCommand(server: string, dir: string, opts: ExportCliOptions): Promise<void> {
  const target = exportTarget(server, opts);
  const { exportConfig } = await import('../export/index.js');
  const report = await exportConfig(await exportOptions(target, dir, opts));
  if (opts.json) printJson(inCommandLineReport(report));
  else printExportReport(report);
}

/** The server named, with the options only some servers take refused for the others. */
function exportTarget(server: string, opts: ExportCliOptions): ExportTarget {
  if (!(EXPORT_TARGETS as readonly string[]).includes(server))
    throw usageError(`"${server}" is not a server depotkit exports for; choose one of ${EXPORT_TARGETS.join(', ')}.`);
  const target = server as ExportTarget;
  if (target !== 'systemd') {
    const given = (['workers', 'exec', 'ca', 'serviceUser'] as const).filter((o) => opts[o] !== undefined);
    if (given.length > 0) throw usageError(`--${given[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for the systemd export only.`);
  }
  if (target !== 'caddy' && opts.caddyVersion) throw usageError('--caddy-version is for the caddy export only.');
  return target;
}

async function exportOptions(target: ExportTarget, dir: string, opts: ExportCliOptions): Promise<ExportOptions> {
  const { caddyVersionOption } = await import('../export/index.js');
  return {
    target,
    root: dir,
    out: opts.out,
    name: opts.name,
    host: opts.host,
    port: opts.port,
    serverName: opts.serverName,
    cert: opts.cert,
    key: opts.key,
    ca: opts.ca,
    dns: opts.dns,
    ip: opts.ip,
    auth: await exportAuth(opts),
    openPrefixes: opts.open,
    openHcl: opts.openHcl,
    statusPage: opts.statusPage,
    group: opts.group,
    caddyVersion: opts.caddyVersion === undefined ? undefined : caddyVersionOption(opts.caddyVersion),
    accessLog: opts.accessLog,
    logFormat: opts.logFormat,
    workers: opts.workers,
    grace: opts.grace,
    exec: opts.exec === undefined ? undefined : opts.exec.trim().split(/\s+/),
    serviceUser: opts.serviceUser,
    force: opts.force,
  };
}

/** The report with the options and operations its words name spelt as the command line has them. */
function inCommandLineReport(report: ExportReport): ExportReport {
  return {
    ...report,
    nextSteps: report.nextSteps.map(inCommandLineWords),
    check: inCommandLineWords(report.check),
    warnings: report.warnings.map(inCommandLineWords),
  };
}

function printExportReport(report: ExportReport): void {
  for (const w of report.warnings) warn(w);
  printLines([
    `Wrote the ${report.target} configuration for ${report.root}, served as ${report.url}:`,
    ...report.files.map((f) => `  ${f.path}  (mode ${f.mode.toString(8).padStart(4, '0')}${f.group ? `, group ${f.group}` : ''})`),
    ...Object.entries(report.reads)
      .filter(([, path]) => path !== undefined)
      .map(([what, path]) => `  reads ${what}: ${path}`),
    ...(report.open.length > 0 ? [`  open without credentials: ${report.open.map((p) => `/${p}/`).join(', ')}`] : []),
    ...(report.caddy ? [`  for Caddy ${report.caddy.version ?? '2 (version unknown)'}: ${report.caddy.directive}`] : []),
    '',
    'Next:',
    ...report.nextSteps.map((s, i) => `  ${i + 1}. ${s}`),
  ]);
}

/** The users file is named in the configuration: by absolute path. */
async function exportAuth(opts: ExportCliOptions): Promise<ExportOptions['auth']> {
  const auth = await basicAuthFrom(opts);
  return auth && 'htpasswdFile' in auth ? { htpasswdFile: resolve(auth.htpasswdFile) } : auth;
}
