import { realpathSync } from 'node:fs';
import { reloadCommand } from './reload.js';
import { dirname, join, resolve } from 'node:path';
import { isSea } from 'node:sea';
import { EXPORT_DEBIAN } from '../constants.js';
import { CA_KEY_FILE } from '../cert/files.js';
import { serveCommandLine } from '../server/command-line.js';
import { SERVE_DEFAULT_GRACE_SECONDS } from '../server/tuning.js';
import { usageError } from '../util/errors.js';
import { baseScope, readsInPlace, render, usersFile } from './scope.js';
import { checkCommand, groupStep } from './steps.js';
import type { TemplateScope } from './template.js';
import { PUBLIC_MODE, SECRET_MODE, type ExportContext, type ExportOptions, type Plan, type PlannedFile } from './types.js';
import { configPath, hostValue, shellWord } from './values.js';

const debian = EXPORT_DEBIAN.systemd;

/** The command that runs depotkit now: this single executable, or node with the CLI script. */
export function currentDepotkitCommand(): string[] {
  if (isSea()) return [process.execPath];
  const script = process.argv[1];
  return script ? [process.execPath, realpathSync(script)] : [debian.binary];
}

/** Where serve writes its access log: the journal, the given file, or by default a file under the unit's own logs directory. */
interface UnitLog {
  journal: boolean;
  file?: string;
  /** The unit's LogsDirectory=, when the file is in it. */
  logsDirectory?: string;
}

function unitLog(options: ExportOptions, c: ExportContext): UnitLog {
  const own = `${debian.logDir}/${c.name}/access.log`;
  if (options.accessLog === '-') return { journal: true };
  const file = c.accessLog ?? own;
  return { journal: false, file, ...(file === own ? { logsDirectory: c.name } : {}) };
}

/** The unit's ExecStart=: depotkit serve with the options the export was given, each word quoted where systemd needs it. */
function execStart(options: ExportOptions, c: ExportContext, exec: string[], log: UnitLog, grace: number): string {
  const ca = options.ca ? configPath(resolve(options.ca), '`ca`') : undefined;
  if (ca) {
    c.warnings.push(
      `With \`ca\` the service user must read the CA key in ${ca}; a certificate issued beforehand (\`cert\`, \`key\`) keeps the CA key off the server.`,
    );
  }
  const serve = serveCommandLine(c.root, [
    ['host', c.host],
    ['port', c.port],
    ['cert', c.cert],
    ['key', c.key],
    ['ca', ca],
    ['dns', ca ? (options.dns ?? []).map((d) => hostValue(d, '`dns`')) : undefined],
    ['ip', ca ? (options.ip ?? []).map((ip) => hostValue(ip, '`ip`')) : undefined],
    ['htpasswd', c.users?.file],
    ['open', c.open],
    ['workers', options.workers],
    ['grace', grace],
    ['accessLog', log.journal ? '-' : log.file],
    ['logFormat', options.logFormat === 'combined' ? undefined : options.logFormat],
  ]);
  const words = [...exec, ...serve];
  for (const w of words) if (/["\\%$\s]/.test(w)) throw usageError(`"${w}" cannot be written into a systemd unit's command line.`);
  return words.map((w, i) => (i < exec.length || w.startsWith('/') ? `"${w}"` : w)).join(' ');
}

/** A systemd unit that runs depotkit serve as its own user, with its sysusers.d and logrotate files. */
export async function planSystemd(options: ExportOptions, c: ExportContext): Promise<Plan> {
  const exec = (options.exec ?? currentDepotkitCommand()).map((w, i) => (i === 0 ? configPath(w, '`exec`') : w));
  const grace = options.grace ?? SERVE_DEFAULT_GRACE_SECONDS;
  const log = unitLog(options, c);
  const scope: TemplateScope = {
    ...baseScope(c),
    user: c.serviceUser,
    group: c.group,
    execStart: execStart(options, c, exec, log, grace),
    grace,
    // Past the grace period, the server's own hard stop (5 s later) and a margin: systemd's SIGKILL stays the last resort.
    timeoutStopSec: grace + 15,
    logsDirectory: log.logsDirectory ?? '',
    logFile: log.file ?? '',
  };
  const unit = join(c.out, `${c.name}.service`);
  const logrotate = join(c.out, `${c.name}.logrotate`);
  const sysusers = join(c.out, `${c.name}.sysusers.conf`);
  const files: PlannedFile[] = [
    { path: unit, role: 'unit', text: await render('systemd.service', scope), mode: PUBLIC_MODE },
    { path: sysusers, role: 'sysusers', text: await render('sysusers.conf', scope), mode: PUBLIC_MODE },
    ...(log.file ? [{ path: logrotate, role: 'logrotate' as const, text: await render('logrotate', scope), mode: PUBLIC_MODE }] : []),
    ...usersFile(c),
  ];
  if (log.file && !log.logsDirectory)
    c.warnings.push(`The unit can write only ${debian.logDir}/${c.name}/; for ${log.file}, add ReadWritePaths=${dirname(log.file)} to it.`);
  const { htpasswd, ...certificate } = readsInPlace(c);
  const ca = options.ca ? resolve(options.ca) : undefined;
  return {
    files,
    reads: { ...certificate, ...(ca ? { ca } : {}), ...(htpasswd ? { htpasswd } : {}) },
    nextSteps: (unowned) => [
      ...(exec.length === 1 && exec[0] === debian.binary ? [`sudo install -m 0755 <the depotkit executable> ${debian.binary}   # if it is not there yet`] : []),
      `sudo cp ${shellWord(sysusers)} ${debian.sysusersDir}/${c.name}.conf && sudo systemd-sysusers   # creates the user ${c.serviceUser}`,
      ...groupStep(
        c,
        [...unowned, ...files.filter((f) => f.mode === SECRET_MODE).map((f) => f.path)],
        [...(c.key ? [c.key] : []), ...(ca ? [join(ca, CA_KEY_FILE)] : [])],
      ),
      `sudo cp ${shellWord(unit)} ${debian.unitDir}/${c.name}.service${log.file ? ` && sudo cp ${shellWord(logrotate)} ${debian.logrotateDir}/${c.name}` : ''}`,
      `sudo systemd-analyze verify ${debian.unitDir}/${c.name}.service && sudo systemctl daemon-reload && sudo ${debian.enableNow} ${c.name}`,
      `${reloadCommand('systemd', c.name, 'sudo ')}   # after renewing the certificate or changing the users: SIGHUP, downloads go on`,
      checkCommand(c),
    ],
  };
}
