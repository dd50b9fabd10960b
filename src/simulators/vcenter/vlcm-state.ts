import { randomUUID } from 'node:crypto';
import { CIS_TASK_STATUS, MGMT_ERROR_TYPES, VLCM_DEPOT_INACCESSIBLE, type CisTaskStatus } from '../../constants.js';
import { message, type MgmtMessage } from '../../vcenter/wire.js';
import { VLCM_MESSAGE_IDS, VLCM_TASK_OPERATIONS } from './literals.js';
import { fetchOfflineBundle, fetchOnlineDepot, type DepotComponent, type DepotFetch } from './vlcm-fetch.js';

/** An online or UMDS depot's settings (the reference's Info: description empty when none was given). */
export interface DepotSettings {
  location: string;
  description: string;
  enabled: boolean;
  ownerdata?: string;
}

/** A task as `GET /api/cis/tasks/{task}` answers it (the reference's Cis Task Info, the fields the simulator fills). */
export interface TaskInfo {
  service: string;
  operation: string;
  description: MgmtMessage;
  status: CisTaskStatus;
  cancelable: boolean;
  start_time?: string;
  end_time?: string;
  progress?: { total: number; completed: number; message: MgmtMessage };
  error?: { error_type: string; messages: MgmtMessage[] };
  result?: unknown;
}

/** What a task's work ends with: its result, or the messages of its error. */
type TaskOutcome = { result?: unknown } | { failed: MgmtMessage[] };

/** Where a depot's synced content is kept: each online depot by id, the UMDS depot, each offline depot by id. */
const key = { online: (id: string) => `online/${id}`, umds: 'umds', offline: (id: string) => `offline/${id}` };

/**
 * vLCM's depots on the simulated vCenter: the online depots, the one UMDS depot, the offline
 * depots pulled from a URL, what each listed when last synced, and the tasks that sync and pull
 * them. A sync reads the UMDS depot alone when it is set and enabled ("online depots are
 * ignored" then), else every enabled online depot; a depot that fails keeps what it listed before.
 */
export class VlcmDepots {
  readonly online = new Map<string, DepotSettings>();
  umds?: DepotSettings;
  readonly offline = new Map<string, DepotSettings & { source_type: string }>();
  private readonly content = new Map<string, DepotComponent[]>();
  readonly tasks = new Map<string, TaskInfo>();
  private seq = 0;

  /** `trusted` gives vCenter's trusted root chains as they are when a fetch starts. */
  constructor(private readonly trusted: () => string[]) {}

  newId(prefix: string): string {
    return `${prefix}-${++this.seq}`;
  }

  deleteOnline(id: string): void {
    this.online.delete(id);
    this.content.delete(key.online(id));
  }

  deleteUmds(): void {
    this.umds = undefined;
    this.content.delete(key.umds);
  }

  deleteOffline(id: string): void {
    this.offline.delete(id);
    this.content.delete(key.offline(id));
  }

  /** Every component and version the depots listed, from the depots a sync reads and every offline depot. */
  components(): DepotComponent[] {
    const umds = this.umds?.enabled === true;
    const keys = [
      ...(umds ? [key.umds] : [...this.online].filter(([, d]) => d.enabled).map(([id]) => key.online(id))),
      ...[...this.offline.keys()].map(key.offline),
    ];
    const all = keys.flatMap((k) => this.content.get(k) ?? []);
    return all.filter((c, i) => all.findIndex((o) => o.name === c.name && o.version === c.version) === i);
  }

  /** Starts a sync of the depots vLCM reads; returns the task's id. */
  sync(): string {
    const targets: Array<[string, DepotSettings]> =
      this.umds?.enabled === true ? [[key.umds, this.umds]] : [...this.online].filter(([, d]) => d.enabled).map(([id, d]) => [key.online(id), d]);
    return this.task(VLCM_TASK_OPERATIONS.sync, VLCM_MESSAGE_IDS.syncDescription, 'Sync the depots', targets.length, async (done): Promise<TaskOutcome> => {
      const failed: MgmtMessage[] = [];
      for (const [k, depot] of targets) {
        const fetched = await fetchOnlineDepot(depot.location, this.trusted());
        if (fetched.ok) this.content.set(k, fetched.components);
        else failed.push(message(VLCM_MESSAGE_IDS.depotCause, `${depot.location}: ${fetched.cause}`, [depot.location]));
        done();
      }
      return failed.length === 0 ? {} : { failed };
    });
  }

  /** Starts the pull of an offline bundle; the depot exists once the task succeeds, its id the task's result. */
  createOffline(spec: DepotSettings & { source_type: string }): string {
    return this.task(VLCM_TASK_OPERATIONS.offline, VLCM_MESSAGE_IDS.offlineDescription, 'Import an offline depot', 1, async (done) => {
      const fetched: DepotFetch = await fetchOfflineBundle(spec.location, this.trusted());
      done();
      if (!fetched.ok) return { failed: [message(VLCM_MESSAGE_IDS.depotCause, `${spec.location}: ${fetched.cause}`, [spec.location])] };
      const id = this.newId('offline');
      this.offline.set(id, spec);
      this.content.set(key.offline(id), fetched.components);
      return { result: { depot: id } };
    });
  }

  /**
   * A task: PENDING when answered, RUNNING once its work starts (on the next turn of the event
   * loop), then SUCCEEDED or FAILED with vLCM's one sentence first and each cause after it.
   */
  private task(
    names: { service: string; operation: string },
    descriptionId: string,
    description: string,
    total: number,
    work: (done: () => void) => Promise<TaskOutcome>,
  ): string {
    const id = `${randomUUID()}:${names.service}`;
    const info: TaskInfo = {
      ...names,
      description: message(descriptionId, description),
      status: CIS_TASK_STATUS.pending,
      cancelable: false,
    };
    this.tasks.set(id, info);
    const progress = (completed: number) => ({ total, completed, message: message(VLCM_MESSAGE_IDS.syncProgress, `${completed} of ${total} done.`) });
    setImmediate(() => {
      Object.assign(info, { status: CIS_TASK_STATUS.running, start_time: new Date().toISOString(), progress: progress(0) });
      let completed = 0;
      work(() => (info.progress = progress(++completed)))
        .catch((err: unknown) => ({ failed: [message(VLCM_MESSAGE_IDS.depotCause, String(err))] }))
        .then((outcome) => {
          info.end_time = new Date().toISOString();
          if ('failed' in outcome) {
            info.status = CIS_TASK_STATUS.failed;
            info.error = {
              error_type: MGMT_ERROR_TYPES.error,
              messages: [message(VLCM_MESSAGE_IDS.depotInaccessible, `${VLCM_DEPOT_INACCESSIBLE}.`), ...outcome.failed],
            };
          } else {
            info.status = CIS_TASK_STATUS.succeeded;
            if (outcome.result !== undefined) info.result = outcome.result;
          }
        });
    });
    return id;
  }
}
