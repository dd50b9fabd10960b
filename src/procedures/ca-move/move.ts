import { promptedPasswords, type DepotSpec, type InstallerTarget } from '../../installer/index.js';
import { judgeServedChain, makePlan, readMaterial, type CaMoveMaterial } from './plan.js';
import { freshState, loadState, saveState, type CaMoveState } from './state.js';
import { CA_MOVE_WAITS, switchServed } from './switch.js';
import { checkServeProcess } from './serve-process.js';
import { importAndProve } from './trusting.js';
import { retireOldCa } from './retire.js';
import { revalidate } from './revalidate.js';
import { ConsumerSessions } from './sessions.js';
import { inOrder, isVcenter, retireOnVcenters, syncOnVcenters, trustOnVcenters } from './vcenters.js';
import { ServedAnchors } from './route.js';
import { consumersDepotUrl, reachFinding, reachOf } from './reach.js';
import { reloadHintText, reloadHints } from './reload-hint.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import type { Finding } from '../../util/findings.js';
import type { ServedChain } from '../../net/index.js';
import { sha256Fingerprint, splitPemBlocks } from '../../cert/index.js';
import type { CaMoveOptions, CaMovePlan, CaMoveReport, ConsumerRow, PhaseName, PhaseReport, ServedDepot } from './types.js';

/** The names of the rows that failed, for a sentence. */
function failedNames(rows: Array<ConsumerRow<unknown>>): string {
  return rows
    .filter((r) => !r.ok)
    .map((r) => r.name)
    .join(', ');
}

/**
 * What to do when check rejects the chain served after the switch. The plan passed the chain written, so
 * a served chain that is another (the leaf alone, a chain file of the server's own) is the server's doing;
 * else check's own fix.
 */
function rejectionFix(served: ServedChain, material: CaMoveMaterial, depot: ServedDepot, errors: Finding[]): string | undefined {
  const written = splitPemBlocks(material.certText, 'CERTIFICATE').map(sha256Fingerprint);
  const sent = served.chainPems.map(sha256Fingerprint);
  // A server may add the CA after the chain: only what it leaves out of the file, or puts in its place, differs.
  if (written.some((sha, i) => sent[i] !== sha)) {
    return `The server sends ${sent.length} certificate(s), not the ${written.length} of ${depot.certFile}: have it send that file whole (the leaf, then its intermediates) and reload it.`;
  }
  return errors.find((f) => f.fix)?.fix;
}

class Move {
  readonly phases: PhaseReport[] = [];
  readonly sessions: ConsumerSessions;
  readonly anchors: ServedAnchors;
  /** The depot as the consumers are given it: by their name for it, with `asHost`. */
  readonly depot: DepotSpec;
  /** What to do about a served chain check rejected after the switch. */
  rejection?: string;

  constructor(
    readonly opts: CaMoveOptions,
    passwords: ReadonlyMap<string, string>,
    readonly plan: CaMovePlan,
    readonly material: CaMoveMaterial,
    readonly state: CaMoveState,
  ) {
    this.sessions = new ConsumerSessions({ concurrency: opts.concurrency, timeoutMs: opts.timeoutMs, passwords });
    this.anchors = new ServedAnchors(reachOf(plan), opts.timeoutMs);
    this.depot = opts.asHost ? { ...opts.depot, url: consumersDepotUrl(opts).href } : opts.depot;
  }

  /** Records a phase; an interruption meanwhile stops the move here, after the phase's progress was saved. */
  record(phase: PhaseName, ok: boolean, extra: Omit<PhaseReport, 'phase' | 'ok'> = {}): boolean {
    const report = { phase, ok, ...extra };
    this.phases.push(report);
    this.opts.onPhase?.(report);
    if (this.opts.signal?.aborted) {
      throw new DepotkitError(
        `The move was interrupted during its ${phase} phase; its progress is kept in ${this.plan.stateFile}.`,
        EXIT.problems,
        'Run the move again: it carries on where it stopped.',
      );
    }
    return ok;
  }

  save(): Promise<void> {
    return saveState(this.plan.stateFile, this.state);
  }

  /** The consumers still to validate the depot on the new certificate. */
  remaining(): InstallerTarget[] {
    return this.opts.consumers.filter((c) => !this.state.revalidated.includes(c.name));
  }

  /** Import and prove on `targets`; false (with the rows) when the move must stop before the switch. */
  async trust(targets: InstallerTarget[]): Promise<boolean> {
    const newCa = { pem: this.material.newCaPem, sha256: this.plan.newCa.sha256 };
    const ctx = { newCa, depot: this.depot, anchors: this.anchors, repoint: this.opts.repoint };
    const vcenters = targets.filter(isVcenter);
    const { imported: installers, proven: provenInstallers } = await importAndProve(
      this.sessions,
      targets.filter((t) => !isVcenter(t)),
      ctx,
      this.plan.oldCa?.sha256,
    );
    const onVcenters = await trustOnVcenters(this.sessions, vcenters, this.material.newCaPem);
    const imported = inOrder(
      targets,
      installers,
      onVcenters.map(({ result, ...row }) => (result ? { ...row, result: result.imported } : row)),
    );
    const proven = inOrder(
      targets,
      provenInstallers,
      onVcenters.map(({ result, ...row }) => (result ? { ...row, result: result.proven } : row)),
    );
    this.record(
      'import',
      imported.every((r) => r.ok),
      { rows: imported },
    );
    const failed = proven.filter((r) => !r.ok);
    const excused = this.opts.skipUnreachable && failed.every((r) => r.unreachable);
    return this.record('prove', failed.length === 0 || !!excused, {
      rows: proven,
      ...(failed.length > 0 ? { note: `${failedNames(proven)} ${excused ? 'cannot be reached: skipped as asked' : 'does not hold the new CA'}` } : {}),
    });
  }

  /**
   * The switch, then check's verdict on the chain the depot now serves: a rejected one fails the phase
   * before any consumer validates it, unmarked as switched, so that a re-run judges it again.
   */
  async switchOver(): Promise<'switched' | 'reload-needed' | 'rejected'> {
    const reach = reachOf(this.plan);
    const switched = await switchServed(
      this.material,
      this.opts.served,
      reach,
      this.plan.leaf.sha256,
      {
        timeoutMs: this.opts.switchTimeoutMs ?? CA_MOVE_WAITS.switchTimeoutMs,
        trustSettleMs: this.opts.trustSettleMs ?? CA_MOVE_WAITS.trustSettleMs,
        reloadUnderWayMs: this.opts.reloadUnderWayMs ?? CA_MOVE_WAITS.reloadUnderWayMs,
      },
      this.opts.signal,
    );
    if (switched.action === 'reload-needed') {
      this.record('switch', false, { note: switched.action });
      return switched.action;
    }
    const findings = judgeServedChain(switched.served, this.material.newCaPem, reach, this.opts.names);
    const errors = findings.filter((f) => f.severity === 'error');
    if (errors.length > 0) {
      this.rejection = rejectionFix(switched.served, this.material, this.opts.served, errors);
      this.record('switch', false, { note: `served, but check rejects the chain served (${[...new Set(errors.map((f) => f.id))].join(', ')})`, findings });
      return 'rejected';
    }
    this.state.switched = new Date().toISOString();
    await this.save();
    this.record('switch', true, { note: switched.action, findings });
    return 'switched';
  }

  /** The move stopped on check's rejection of the chain served after the switch: what to do, and the re-run. */
  rejected(resumed: boolean): CaMoveReport {
    const next = [
      'The depot serves the new certificate with a chain check rejects; no consumer was asked to validate it.',
      ...(this.rejection ? [this.rejection] : []),
      'Then run the move again: it judges the served chain again before any consumer validates it.',
    ];
    return this.report(false, resumed, next.join(' '));
  }

  async revalidateRemaining(): Promise<boolean> {
    const remaining = this.remaining();
    const rows = inOrder(
      remaining,
      await revalidate(
        this.sessions,
        remaining.filter((t) => !isVcenter(t)),
        this.depot,
        this.material.newCaPem,
        !this.opts.removeOld,
      ),
      await syncOnVcenters(this.sessions, remaining.filter(isVcenter)),
    );
    for (const r of rows) if (r.ok) this.state.revalidated.push(r.name);
    await this.save();
    return this.record(
      'revalidate',
      rows.every((r) => r.ok),
      { rows },
    );
  }

  async retire(): Promise<boolean> {
    const targets = this.opts.consumers.filter((c) => !this.state.retired.includes(c.name));
    const input = { oldCaPem: this.material.oldCaPem!, newCaPem: this.material.newCaPem, timeoutMs: this.opts.timeoutMs, reach: reachOf(this.plan) };
    const rows = inOrder(
      targets,
      await retireOldCa(
        this.sessions,
        targets.filter((t) => !isVcenter(t)),
        input,
      ),
      await retireOnVcenters(this.sessions, targets.filter(isVcenter), input),
    );
    for (const r of rows) if (r.ok) this.state.retired.push(r.name);
    await this.save();
    return this.record(
      'retire',
      rows.every((r) => r.ok),
      { rows },
    );
  }

  report(ok: boolean, resumed: boolean, next?: string): CaMoveReport {
    return { ok, dryRun: false, resumed, plan: this.plan, phases: this.phases, ...(next ? { next } : {}) };
  }

  /** The move stopped after writing the pair: the server is to be reloaded by hand, with the command its kind takes. */
  reloadNeeded(resumed: boolean): CaMoveReport {
    const reload = reloadHints(this.opts.served);
    const next = `Reload the server (${reloadHintText(reload)}), then run the move again.`;
    return { ...this.report(false, resumed, next), reload };
  }
}

/**
 * Moves a served depot to a new CA without a failed validation: the new CA
 * is trusted by every consumer (and proven so) before the server switches,
 * every consumer validates the depot on the new certificate, and only then,
 * when asked, the old CA goes. The progress is kept in a state file, so a
 * re-run after a failure carries on where the move stopped.
 */
export async function moveDepotCa(opts: CaMoveOptions): Promise<CaMoveReport> {
  // Asked before anything else: a prompt on a terminal, not in the middle of the move.
  const passwords = await promptedPasswords(opts.consumers, opts.prompt);
  const material = await readMaterial(opts);
  const plan = makePlan(material, opts);
  await checkServeProcess(opts.served);
  const unreached = await reachFinding(reachOf(plan), opts.timeoutMs);
  if (unreached) plan.findings.push(unreached);
  const planOk = !plan.findings.some((f) => f.severity === 'error');
  if (opts.dryRun) return { ok: planOk, dryRun: true, resumed: false, plan, phases: [{ phase: 'plan', ok: planOk }] };
  // Before any consumer is asked: the served certificate is read there before the import and after the switch.
  if (unreached?.severity === 'error') throw new DepotkitError(unreached.message, EXIT.problems, unreached.fix);
  const prior = await loadState(plan.stateFile, plan.newCa.sha256, plan.leaf.sha256);
  const move = new Move(opts, passwords, plan, material, prior ?? freshState(plan.newCa.sha256, plan.leaf.sha256));
  const resumed = prior !== undefined;
  // Kept from the start: a re-run after a stop knows it carries on this move.
  await move.save();
  move.record('plan', true);
  // Revoked at once on an interruption: the requests under way are cut off, and each phase stops at its record.
  const interrupted = () => void move.sessions.abort();
  opts.signal?.addEventListener('abort', interrupted, { once: true });
  try {
    return await runPhases(move, resumed);
  } finally {
    opts.signal?.removeEventListener('abort', interrupted);
    await move.sessions.close();
  }
}

/** The phases after the plan, each only when an earlier run has not done it. */
async function runPhases(move: Move, resumed: boolean): Promise<CaMoveReport> {
  const rerun = 'Run the move again once they are back: it carries on where it stopped.';
  // Consumers not yet on the new certificate get the new CA first, before the switch and on a re-run after it.
  if (move.remaining().length > 0 && !(await move.trust(move.remaining()))) {
    return move.report(false, resumed, move.state.switched ? rerun : `The served certificate was not switched. ${rerun}`);
  }
  if (!move.state.switched) {
    move.state.trusted = new Date().toISOString();
    await move.save();
    const switched = await move.switchOver();
    if (switched === 'reload-needed') return move.reloadNeeded(resumed);
    if (switched === 'rejected') return move.rejected(resumed);
  } else move.record('switch', true, { skipped: true, note: 'already switched' });
  if (move.remaining().length > 0 && !(await move.revalidateRemaining())) return move.report(false, resumed, rerun);
  if (!move.phases.some((p) => p.phase === 'revalidate')) move.record('revalidate', true, { skipped: true });
  if (move.opts.removeOld && !(await move.retire())) return move.report(false, resumed, rerun);
  return move.report(true, resumed);
}
