import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { DEPOT_PATHS, EXPORT_DEFAULT_PORT, EXPORT_TARGETS, UMDS_PATCH_STORE_DIR, type ExportTarget } from '../constants.js';
// The library loads when the command runs (the CLI starts fast).
import type { ExportOptions } from '../export/index.js';
import { SERVE_DEFAULT_GRACE_SECONDS } from '../server/tuning.js';
import { usageError } from '../util/errors.js';
import {
  type LogFormat,
  basicAuthFrom,
  forceOption,
  hostOption,
  jsonOption,
  logFormatOption,
  passwordEnvOption,
  passwordFileOption,
  portOption,
  secondsOption,
  signingCaOption,
  wholeNumber,
} from './options.js';
import { collect, printJson, printLines, warn } from './output.js';

interface ExportCliOptions {
  out: string;
  name: string;
  host?: string;
  port: number;
  serverName?: string;
  statusPage?: boolean;
  cert?: string;
  key?: string;
  ca?: string;
  dns: string[];
  ip: string[];
  user?: string;
  passwordFile?: string;
  passwordEnv?: string;
  htpasswd?: string;
  open: string[];
  openHcl?: boolean;
  group?: string;
  caddyVersion?: string;
  accessLog?: string;
  logFormat: LogFormat;
  workers?: number;
  grace: number;
  exec?: string;
  serviceUser?: string;
  force?: boolean;
  json?: boolean;
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('write the configuration of another server (nginx, Apache, Caddy) or a systemd unit for depotkit serve, serving a depot as serve does')
    .argument('<server>', EXPORT_TARGETS.join(', '))
    .argument('<depot-dir>', 'the web root: the folder that contains PROD/')
    .requiredOption(
      '--out <dir>',
      'folder for the files; the configuration names them there by absolute path, so write them where they will stay (e.g. /etc/depotkit)',
    )
    .option('--name <name>', 'base name of the files, the systemd unit and its user', 'depotkit')
    .addOption(hostOption(undefined, 'address to listen on (default: every address)'))
    .addOption(portOption(EXPORT_DEFAULT_PORT, 'port', 1))
    .option('--server-name <fqdn>', "the depot's FQDN as the installer is given it (default: the certificate's first DNS name)")
    .option('--cert <file>', 'server certificate PEM, best the chain (leaf then CA), read where it is')
    .option('--key <file>', 'its private key PEM, read where it is')
    .addOption(signingCaOption('systemd only: depotkit serve issues its certificate from this CA folder'))
    .option('--dns <name>', 'systemd with --ca: a DNS name of the issued certificate (repeatable)', collect, [])
    .option('--ip <addr>', 'systemd with --ca: an IP address of the issued certificate (repeatable)', collect, [])
    .addOption(new Option('--user <name>', 'Basic auth user; its password is written hashed, as the server reads it').conflicts('htpasswd'))
    .addOption(passwordFileOption("the --user's"))
    .addOption(passwordEnvOption("the --user's"))
    .addOption(
      new Option('--htpasswd <file>', 'Basic auth users from an htpasswd file, read where it is (Caddy: copied in its syntax; bcrypt only)').conflicts([
        'passwordFile',
        'passwordEnv',
      ]),
    )
    .option('--open <prefix>', `leave a path prefix under the root without auth (repeatable), e.g. ${UMDS_PATCH_STORE_DIR}`, collect, [])
    .option('--open-hcl', `leave ${DEPOT_PATHS.hclDir} without auth, as the vendor's web-server recipe does`)
    .option('--status-page', "nginx, Apache, Caddy: serve a static copy of serve's status page at / (behind the auth) and the CA certificate at /ca.pem")
    .option('--group <group>', 'group that must read the users file (default: www-data for nginx and Apache, caddy, or the service user)')
    .option('--caddy-version <version>', "Caddy's version, when no caddy here can tell (`caddy version`): basic_auth from 2.8, basicauth before")
    .option('--access-log <file>', "access log file (systemd: default /var/log/<name>/access.log with a logrotate file; '-' for the journal)")
    .addOption(logFormatOption('systemd: access log format'))
    .option('--workers <n>', 'systemd: serving processes (default: the core count)', wholeNumber('--workers', { min: 1 }))
    .addOption(secondsOption('--grace', 'systemd: how long running downloads may finish on stop', SERVE_DEFAULT_GRACE_SECONDS, 0))
    .option('--exec <command>', 'systemd: the command that runs depotkit (default: the one running now)')
    .option('--service-user <name>', 'systemd: the dedicated user the service runs as (default: the --name); a sysusers.d file creates it')
    .addOption(forceOption('replace files that exist'))
    .addOption(jsonOption('print the report as JSON'))
    .action(async (server: string, dir: string, opts: ExportCliOptions) => {
      if (!(EXPORT_TARGETS as readonly string[]).includes(server))
        throw usageError(`"${server}" is not a server depotkit exports for; choose one of ${EXPORT_TARGETS.join(', ')}.`);
      const target = server as ExportTarget;
      if (target !== 'systemd') {
        const given = (['workers', 'exec', 'ca', 'serviceUser'] as const).filter((o) => opts[o] !== undefined);
        if (given.length > 0) throw usageError(`--${given[0]!.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for the systemd export only.`);
      }
      if (target !== 'caddy' && opts.caddyVersion) throw usageError('--caddy-version is for the caddy export only.');
      const { exportConfig, caddyVersionOption } = await import('../export/index.js');
      const options: ExportOptions = {
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
      const report = await exportConfig(options);
      if (opts.json) {
        printJson(report);
        return;
      }
      for (const w of report.warnings) warn(w);
      printLines([
        `Wrote the ${target} configuration for ${report.root}, served as ${report.url}:`,
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
    });
}

/** The users file is named in the configuration: by absolute path. */
async function exportAuth(opts: ExportCliOptions): Promise<ExportOptions['auth']> {
  const auth = await basicAuthFrom(opts);
  return auth && 'htpasswdFile' in auth ? { htpasswdFile: resolve(auth.htpasswdFile) } : auth;
}
