import type { TlsMaterial } from './tls.js';
import type { RunningDepot } from './workers.js';
import { errorMessage } from '../util/errors.js';

/** The signals a server acts on: a reload, and the two ways to stop it. */
const SERVER_SIGNALS: readonly NodeJS.Signals[] = ['SIGHUP', 'SIGTERM', 'SIGINT'];

/**
 * A server's signals, listened for from the moment this exists, and handed to
 * whoever can act on them. Until a process listens for SIGHUP or SIGTERM,
 * Node leaves the default action, which ends it: a `systemctl reload` right
 * after `start` killed a server still starting. A signal the current taker
 * declines is held (once) for the next one.
 */
export class ServerSignals {
  private readonly held: NodeJS.Signals[] = [];
  private take: (signal: NodeJS.Signals) => boolean = () => false;
  private readonly listener = (signal: NodeJS.Signals): void => {
    if (!this.take(signal) && !this.held.includes(signal)) this.held.push(signal);
  };

  constructor() {
    for (const s of SERVER_SIGNALS) process.on(s, this.listener);
  }

  /**
   * From now on `take` is offered every signal: first those held (a stop
   * before a reload, which it makes pointless), then each as it comes. It
   * answers whether it acted on it.
   */
  handTo(take: (signal: NodeJS.Signals) => boolean): void {
    this.take = take;
    const held = this.held.splice(0).sort((a, b) => Number(a === 'SIGHUP') - Number(b === 'SIGHUP'));
    for (const s of held) this.listener(s);
  }

  /** Stops listening: the process's default actions apply again (a program that supervised a server it no longer runs). */
  close(): void {
    for (const s of SERVER_SIGNALS) process.off(s, this.listener);
  }
}

/** What supervision says as it acts, and what else may stop the server: the CLI prints, a program may log. */
export interface SupervisionHooks {
  /** A line of what happens (reloaded, stopping, stopped). */
  note(line: string): void;
  /** A line of what went wrong, the server serving on. */
  warn(line: string): void;
  /** A second stop: end the process at once (the CLI exits). */
  stopNow(): void;
  /** Calls `stop` when whoever started the server is gone (npm's parent); returns how to stop watching. */
  watchParent?(stop: () => void): () => void;
}

/**
 * Reloads on SIGHUP (the access log file reopened first), stops gracefully on SIGTERM/SIGINT (a second signal stops at once);
 * resolves once stopped. Signals held while the server started are acted on first.
 */
export function supervise(
  running: RunningDepot,
  loadTls: (() => Promise<TlsMaterial>) | undefined,
  graceMs: number,
  hooks: SupervisionHooks,
  signals: ServerSignals,
  logFile?: string,
): Promise<void> {
  const { note, warn } = hooks;
  return new Promise((resolveDone) => {
    let stopping = false;
    const reload = async (): Promise<void> => {
      // The log first, and whatever becomes of the certificate: logrotate has renamed the file already.
      if (logFile) {
        try {
          await running.reopenLog();
          note(`Reopened the access log ${logFile}.`);
        } catch (err) {
          warn(`the access log could not be reopened, still writing to the previous file: ${errorMessage(err)}`);
        }
      }
      try {
        await running.reload(loadTls ? await loadTls() : undefined);
        note('Reloaded the certificate, key and users.');
      } catch (err) {
        // A broken new file must not take the depot down: the old certificate stays in use.
        warn(`reload failed, still serving the previous certificate: ${errorMessage(err)}`);
        // The status page still shows the depot as it is now.
        await running.refreshStatus().catch(() => {});
      }
    };
    const stop = () => {
      if (stopping) hooks.stopNow();
      stopping = true;
      note(`Stopping: no new connections; running downloads have ${graceMs / 1000} s to finish.`);
      void running.close(graceMs).then(() => {
        note('Stopped.');
        resolveDone();
      });
    };
    signals.handTo((signal) => {
      if (signal !== 'SIGHUP') stop();
      // A reload while stopping would only race the workers' shutdown.
      else if (!stopping) void reload();
      return true;
    });
    hooks.watchParent?.(() => {
      note('The npm process that started this server is gone.');
      stop();
    });
  });
}
