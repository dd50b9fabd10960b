import { limiter } from '../../util/limit.js';
import {
  ConsumerClients,
  InstallerConnectionError,
  checkRole,
  runFleet,
  type ApplianceInfo,
  type InstallerClient,
  type InstallerTarget,
} from '../../installer/index.js';
import { DepotkitError, EXIT } from '../../util/errors.js';
import type { MgmtClient } from '../../vcenter/client.js';
import { withVcenter } from '../vcenters/session.js';
import type { CaMoveOptions, ConsumerRow } from './types.js';

interface Session {
  client: InstallerClient;
  appliance: ApplianceInfo;
}

interface SessionOptions extends Pick<CaMoveOptions, 'concurrency' | 'timeoutMs'> {
  /** Passwords, by user name, of the consumers that name no file or variable (promptedPasswords asked for them). */
  passwords?: ReadonlyMap<string, string>;
}

/**
 * One session per consumer for the whole move: each consumer logs in and says
 * what it is (appliance-info) once, and its phases (import, prove, revalidate,
 * retire) reuse that session; a log-in and its revocation per phase were most
 * of the move's requests. Password files and consumer CAs are read once.
 * `close()` revokes every session; `abort()` (an interruption) revokes them at
 * once, log-ins under way included, and no new one opens.
 */
export class ConsumerSessions {
  private readonly sessions = new Map<string, Promise<Session>>();
  private readonly consumers: ConsumerClients;
  /** Every client from before its log-in until it is closed: what an abort revokes. */
  private readonly clients = new Set<InstallerClient>();
  private aborted = false;

  constructor(private readonly opts: SessionOptions) {
    this.consumers = new ConsumerClients({ timeoutMs: opts.timeoutMs, passwords: opts.passwords, retries: 1 });
  }

  /**
   * Runs `task` on every consumer, each row naming the consumer's role and
   * version as appliance-info gave them when the session opened (the task
   * gets them too, not to ask again); a consumer that answers another role
   * than its entry expects fails its row, and one that cannot be reached is
   * marked so (its session is dropped: the next phase, or a re-run, connects again).
   * With `last`, each session is revoked as soon as its task is done, on the
   * connection the task used, rather than after the whole fleet.
   */
  async each<T>(
    targets: InstallerTarget[],
    task: (client: InstallerClient, appliance: ApplianceInfo, target: InstallerTarget) => Promise<{ ok: boolean; result: T }>,
    { last = false }: { last?: boolean } = {},
  ): Promise<Array<ConsumerRow<T>>> {
    const unreachable = new Set<string>();
    const rows = await runFleet(targets, this.opts.concurrency, async (target, seen) => {
      try {
        const { client, appliance } = await this.session(target);
        Object.assign(seen, { role: appliance.role, version: appliance.version });
        checkRole(target, appliance);
        return await task(client, appliance, target);
      } catch (err) {
        if (err instanceof InstallerConnectionError) {
          unreachable.add(target.name);
          await this.drop(target.name);
        }
        throw err;
      } finally {
        if (last) await this.drop(target.name);
      }
    });
    return rows.map((row) => (unreachable.has(row.name) ? { ...row, unreachable: true } : row));
  }

  /** Runs `task` on each vCenter, logged in for it (its role and version in the row), logged out after. */
  vcenters<T>(targets: InstallerTarget[], task: (client: MgmtClient) => Promise<{ ok: boolean; result: T }>): Promise<Array<ConsumerRow<T>>> {
    return runFleet(targets, this.opts.concurrency, async (target, seen) =>
      withVcenter(target, seen, await this.consumers.passwordOf(target), this.opts.timeoutMs, task),
    );
  }

  /**
   * Revokes every session at once, log-ins under way included, cutting off the
   * requests under way; each client waits a few seconds at most (the client's
   * own bound on an aborted close). No session opens after it.
   */
  async abort(): Promise<void> {
    this.aborted = true;
    await Promise.allSettled([...this.clients].map((c) => c.close({ abort: true })));
  }

  /** Revokes every session. */
  async close(): Promise<void> {
    const limit = limiter(this.opts.concurrency);
    const names = [...this.sessions.keys()];
    await Promise.all(names.map((name) => limit(() => this.drop(name))));
  }

  private session(target: InstallerTarget): Promise<Session> {
    if (this.aborted) return Promise.reject(new DepotkitError(`The move was interrupted before ${target.name} was worked on.`, EXIT.problems));
    const existing = this.sessions.get(target.name);
    if (existing) return existing;
    const opening = this.open(target);
    this.sessions.set(target.name, opening);
    // A consumer that could not be logged in to is tried afresh by the next phase.
    opening.catch(() => this.sessions.get(target.name) === opening && this.sessions.delete(target.name));
    return opening;
  }

  private async open(target: InstallerTarget): Promise<Session> {
    const client = await this.consumers.client(target);
    // Held before its log-in, so that an abort during the log-in revokes that session too.
    this.clients.add(client);
    try {
      await client.login();
      return { client, appliance: await client.applianceInfo() };
    } catch (err) {
      this.clients.delete(client);
      await client.close();
      throw err;
    }
  }

  private async drop(name: string): Promise<void> {
    const session = this.sessions.get(name);
    this.sessions.delete(name);
    const open = await session?.catch(() => undefined);
    if (!open) return;
    this.clients.delete(open.client);
    await open.client.close();
  }
}
