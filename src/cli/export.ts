import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEPOT_PATHS, EXPORT_DEFAULT_PORT, EXPORT_TARGETS, UMDS_PATCH_STORE_DIR, type ExportTarget } from '../constants.js';
// The library loads when the command runs (the CLI starts fast).
import type { ExportOptions, ExportReport } from '../export/index.js';
import { usageError } from '../util/errors.js';
import { type ServeOptionValues, basicAuthFrom, forceOption, jsonOption, passwordEnvOption, passwordFileOption, serveOption } from './options.js';
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
  program
    .command('export')
    .description('write nginx, Apache or Caddy configuration, or a systemd unit, serving a depot')
    .argument('<server>', EXPORT_TARGETS.join(', '))
    .argument('<depot-dir>', 'the web root: the folder that contains PROD/')
    .requiredOption(
      '--out <dir>',
      'folder for the files; the configuration names them there by absolute path, so write them where they will stay (e.g. /etc/depotkit)',
    )
    .option('--name <name>', 'base name of the files, the systemd unit and its user', 'depotkit')
    // serve's options, in the words of the export: what the configuration or the unit does with them.
    .addOption(serveOption('host', { description: 'address to listen on (default: every address)', default: undefined }))
    .addOption(serveOption('port', { description: 'port', default: EXPORT_DEFAULT_PORT, min: 1 }))
    .option('--server-name <fqdn>', "the depot's FQDN as the installer is given it (default: the certificate's first DNS name)")
    .addOption(serveOption('cert', { description: 'server certificate PEM, best the chain (leaf then CA), read where it is' }))
    .addOption(serveOption('key', { description: 'its private key PEM, read where it is' }))
    .addOption(serveOption('ca', { description: 'systemd only: depotkit serve issues its certificate from this CA folder' }))
    .addOption(serveOption('dns', { description: 'systemd with --ca: a DNS name of the issued certificate (repeatable)' }))
    .addOption(serveOption('ip', { description: 'systemd with --ca: an IP address of the issued certificate (repeatable)' }))
    .addOption(serveOption('user', { description: 'Basic auth user; its password is written hashed, as the server reads it' }).conflicts('htpasswd'))
    .addOption(passwordFileOption("the --user's"))
    .addOption(passwordEnvOption("the --user's"))
    .addOption(
      serveOption('htpasswd', { description: 'Basic auth users from an htpasswd file, read where it is (Caddy: copied in its syntax; bcrypt only)' }).conflicts(
        ['passwordFile', 'passwordEnv'],
      ),
    )
    .addOption(serveOption('open', { description: `leave a path prefix under the root without auth (repeatable), e.g. ${UMDS_PATCH_STORE_DIR}` }))
    .addOption(serveOption('openHcl', { description: `leave ${DEPOT_PATHS.hclDir} without auth, as the vendor's web-server recipe does` }))
    .option('--status-page', "nginx, Apache, Caddy: serve a static copy of serve's status page at / (behind the auth) and the CA certificate at /ca.pem")
    .option('--group <group>', 'group that must read the users file (default: www-data for nginx and Apache, caddy, or the service user)')
    .option('--caddy-version <version>', "Caddy's version, when no caddy here can tell (`caddy version`): basic_auth from 2.8, basicauth before")
    .addOption(
      serveOption('accessLog', { description: "access log file (systemd: default /var/log/<name>/access.log with a logrotate file; '-' for the journal)" }),
    )
    .addOption(serveOption('logFormat', { description: 'systemd: access log format' }))
    .addOption(serveOption('workers', { description: "systemd: serving processes (default: serve's, one per core beyond the first)" }))
    .addOption(serveOption('grace', { description: 'systemd: how long running downloads may finish on stop' }))
    .option('--exec <command>', 'systemd: the command that runs depotkit (default: the one running now)')
    .option('--service-user <name>', 'systemd: the dedicated user the service runs as (default: the --name); a sysusers.d file creates it')
    .addOption(forceOption('replace files that exist'))
    .addOption(jsonOption('print the report as JSON'))
    .action(exportCommand);
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
