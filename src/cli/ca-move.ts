import { withOptions } from './option-table.js';
import { type Command } from 'commander';
import type { CaMoveOptions, CaMoveReport, PhaseReport, ServedDepot } from '../procedures/index.js';
import { INSTALLER_DEFAULT_USER, type ExportTarget } from '../constants.js';
import { EXIT, errorMessage, usageError } from '../util/errors.js';
import type { Finding } from '../util/findings.js';
import { readFileBounded } from '../util/fs.js';
import { note, printJson, printLines, warn } from './output.js';
import { readPassword, terminalPrompt } from './options.js';
import { EXIT_INTERRUPTED } from './process.js';

/**
 * How long an interrupted move gets to revoke its sessions and save its
 * progress before the process ends anyway: each client waits 3 s at most for a
 * log-in under way and as long for its revocation.
 */
const INTERRUPT_GRACE_MS = 8_000;

interface CaMoveFlags {
  cert: string;
  key: string;
  newCa: string;
  oldCa?: string;
  servedCert: string;
  servedKey: string;
  servePid?: string;
  reloadCommand?: string;
  site?: ExportTarget;
  unit?: string;
  depotUrl: string;
  asHost?: string;
  repoint?: boolean;
  depotUser?: string;
  depotPasswordFile?: string;
  depotPasswordEnv?: string;
  name: string[];
  inventory: string;
  passwordFile?: string;
  passwordEnv?: string;
  installerCa?: string;
  insecure?: boolean;
  timeout: number;
  concurrency: number;
  switchTimeout: number;
  trustSettle: number;
  reloadWait: number;
  stateFile?: string;
  removeOld?: boolean;
  dryRun?: boolean;
  skipUnreachable?: boolean;
  json?: boolean;
}

/** serve's pid, given as a number or as a file that holds it. */
async function pidOf(value: string): Promise<number> {
  let text = value;
  // A regular file of a line: a FIFO or a device given by mistake is refused, not waited on.
  if (!/^\d+$/.test(value)) text = (await readFileBounded(value, 4096, 'pid file')).toString('utf8').trim();
  const pid = Number(text);
  if (!Number.isSafeInteger(pid) || pid < 2) throw usageError(`--serve-pid must be serve's process id or a file that holds it, not "${value}".`);
  return pid;
}

async function servedDepot(flags: CaMoveFlags): Promise<ServedDepot> {
  const files = { certFile: flags.servedCert, keyFile: flags.servedKey };
  if (flags.servePid !== undefined) return { kind: 'serve', ...files, pid: await pidOf(flags.servePid) };
  if (flags.unit !== undefined && flags.site !== 'systemd')
    throw usageError('--unit names the systemd unit of a site exported for systemd: give --site systemd with it.');
  return {
    kind: 'site',
    ...files,
    ...(flags.reloadCommand ? { reloadCommand: flags.reloadCommand } : {}),
    ...(flags.site ? { server: flags.site } : {}),
    ...(flags.unit ? { unit: flags.unit } : {}),
  };
}

async function moveOptions(flags: CaMoveFlags): Promise<CaMoveOptions> {
  const installer = await import('../installer/index.js');
  const consumers = await installer.resolveTargets({ ...flags, user: INSTALLER_DEFAULT_USER });
  const depotPassword = flags.depotUser
    ? await readPassword(
        { file: flags.depotPasswordFile, env: flags.depotPasswordEnv },
        `password of depot user ${flags.depotUser}`,
        `Password of depot user ${flags.depotUser}`,
        '--depot-password',
      )
    : undefined;
  return {
    newCert: flags.cert,
    newKey: flags.key,
    newCa: flags.newCa,
    ...(flags.oldCa ? { oldCa: flags.oldCa } : {}),
    served: await servedDepot(flags),
    depot: { url: flags.depotUrl, ...(flags.depotUser ? { username: flags.depotUser, password: depotPassword } : {}) },
    ...(flags.asHost ? { asHost: flags.asHost } : {}),
    repoint: flags.repoint,
    names: flags.name,
    consumers,
    concurrency: flags.concurrency,
    timeoutMs: flags.timeout * 1000,
    prompt: terminalPrompt(),
    removeOld: flags.removeOld,
    dryRun: flags.dryRun,
    skipUnreachable: flags.skipUnreachable,
    ...(flags.stateFile ? { stateFile: flags.stateFile } : {}),
    switchTimeoutMs: flags.switchTimeout * 1000,
    trustSettleMs: flags.trustSettle * 1000,
    reloadUnderWayMs: flags.reloadWait * 1000,
  };
}

/** A finding of check's verdict (the plan's on the new pair, the switch's on the chain served), as one line. */
function findingLine(f: Finding): string {
  return `  ${f.severity === 'error' ? 'ERROR' : f.severity === 'warning' ? 'WARN ' : 'info '} ${f.id}: ${f.message}`;
}

function phaseLines(phase: PhaseReport): string[] {
  const head = `${phase.phase}: ${phase.skipped ? 'done before' : phase.ok ? 'ok' : 'FAILED'}${phase.note ? ` (${phase.note})` : ''}`;
  const rows = (phase.rows ?? []).map((r) => {
    const who = `  ${r.name}${r.role ? `  ${r.role} ${r.version ?? '?'}` : ''}`;
    // The way the new CA went to this consumer, where the phase sent it (import, revalidate).
    const via = typeof r.result === 'object' && r.result !== null && 'via' in r.result ? `  via ${String(r.result.via)}` : '';
    return r.ok ? `${who}  ok${via}` : `${who}  FAILED  ${r.error?.message ?? JSON.stringify(r.result)}${r.error?.fix ? ` ${r.error.fix}` : ''}`;
  });
  return [head, ...(phase.findings ?? []).map(findingLine), ...rows];
}

function reportLines(report: CaMoveReport): string[] {
  const { plan } = report;
  const reached = plan.reachedAt ? ` (reached here at ${plan.reachedAt})` : '';
  const lines = [`Moving ${plan.depotUrl}${reached} to ${plan.newCa.subject} (SHA-256 ${plan.newCa.sha256}) over ${plan.consumers.length} consumers.`];
  lines.push(...plan.findings.map(findingLine));
  if (report.dryRun) return [...lines, 'Plan (nothing done):', ...plan.steps.map((s, i) => `  ${i + 1}. ${s}`), `State: ${plan.stateFile}`];
  if (report.resumed) lines.push(`Carrying on the move recorded in ${plan.stateFile}.`);
  lines.push(...report.phases.flatMap(phaseLines));
  lines.push(report.ok ? 'The depot is on the new CA; every consumer validated it.' : `Stopped. ${report.next ?? ''}`.trim());
  // The command on a line of its own, to copy.
  if (report.reload?.length === 1) lines.push(`  ${report.reload[0]!.command}`);
  return lines;
}

/**
 * Runs the move; a Ctrl-C or SIGTERM revokes the consumers' open sessions at
 * once (their tokens would stay valid until they expire), lets the move save
 * its progress for a re-run, and exits 130, within a few seconds. A second one
 * ends the process at once.
 */
async function runMove(options: CaMoveOptions): Promise<CaMoveReport> {
  const { moveDepotCa } = await import('../procedures/index.js');
  const controller = new AbortController();
  const interrupted = (): void => {
    warn('interrupted: revoking the open sessions.');
    controller.abort();
  };
  const stopped = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const moving = moveDepotCa({ ...options, signal: controller.signal });
  let why = '';
  const settled = moving.then(
    () => undefined,
    (err: unknown) => void (why = `${errorMessage(err)} `),
  );
  try {
    await Promise.race([settled, stopped]);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
  if (!controller.signal.aborted) return moving;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, INTERRUPT_GRACE_MS)))]);
  clearTimeout(timer);
  // Even a move whose last phase had ended: its sessions were cut off, so its report is not the consumers' state.
  note(`interrupted: ${why}Run the same command again to carry on.`);
  return endInterrupted();
}

function endInterrupted(): never {
  process.exit(EXIT_INTERRUPTED);
}

export function registerCaMoveCommand(program: Command): void {
  const depot = program.commands.find((c) => c.name() === 'depot')!;
  withOptions(
    depot
      .command('move-ca')
      .description(
        'move a served depot to another CA with no failed validation: trust the new CA on every consumer (proven), switch the served certificate, have every consumer validate the depot again, then (--remove-old) drop the old CA; resumable',
      ),
  ).action(async (flags: CaMoveFlags) => {
    const report = await runMove(await moveOptions(flags));
    if (flags.json) printJson(report);
    else printLines(reportLines(report));
    process.exitCode = report.ok ? EXIT.ok : EXIT.problems;
  });
}
