import { setTimeout as sleep } from 'node:timers/promises';
import { CIS_TASK_STATUS, VLCM_API, VLCM_HOSTNAME_MISMATCH_WORDS, VLCM_UNTRUSTED_CA_WORDS, type CisTaskStatus } from '../constants.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { MgmtApiError, connectMgmt, type MgmtClient, type MgmtConnection } from './client.js';
import { VCENTER_DEPOT_DEFAULTS } from './depot-defaults.js';
import { isObject } from './wire.js';

export interface VcenterDepotOptions extends MgmtConnection {
  /** The ESX depot as vLCM is given it: the URL of its root index. */
  depot: string;
  /** Set it as the one UMDS depot instead of adding an online depot. */
  umds?: boolean;
  description?: string;
  /** How long the sync may take; 10 minutes by default. */
  syncTimeoutMs?: number;
  /** How often the sync's task is asked; 500 ms by default. */
  pollMs?: number;
  /** Told of the task's status and progress each time it is asked. */
  onProgress?: (progress: { status: CisTaskStatus; completed?: number; total?: number }) => void;
}

/** One component the vCenter lists in its depot content, with its versions. */
export interface ListedComponent {
  name: string;
  vendor?: string;
  versions: string[];
}

export interface VcenterDepotReport {
  server: string;
  depot: string;
  kind: 'online' | 'umds';
  /** The online depot's id. */
  id?: string;
  /** What was sent: nothing (the depot was set already), the depot added, or its settings changed (enabled again, a new UMDS location). */
  action: 'unchanged' | 'added' | 'updated';
  sync: { task: string; status: CisTaskStatus; messages: string[] };
  ok: boolean;
  /** Every component and version the vCenter lists once synced (from all its depots). */
  components: ListedComponent[];
  /** Why the sync failed, in one sentence, and what to do. */
  problem?: string;
  fix?: string;
  /** Said of the depot's setting, such as online depots being ignored while a UMDS depot is set. */
  notes: string[];
}

const DEFAULT_POLL_MS = 500;

/** The depot's URL as vLCM takes it: http or https, naming a root index. */
function depotLocation(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`"${text}" is not a URL; give the ESX depot as the URL of its root index (https://host[:port]/path/index.xml).`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw usageError(`${text} is not an http or https URL.`);
  if (!url.pathname.endsWith('.xml')) {
    throw usageError(`${text} does not name a root index: give the URL vSphere Lifecycle Manager is given, ending in index.xml or vmw-depot-index.xml.`);
  }
  return url.href;
}

/** Adds the online depot unless one at that location is there (enabled again when it was disabled). */
async function ensureOnline(client: MgmtClient, location: string, description: string | undefined): Promise<Pick<VcenterDepotReport, 'id' | 'action'>> {
  const listed = await client.apiCall('Listing the online depots', 'GET', VLCM_API.online);
  const depots = isObject(listed) ? Object.entries(listed) : [];
  const found = depots.find(([, d]) => isObject(d) && typeof d.location === 'string' && sameLocation(d.location, location));
  if (found) {
    const [id, depot] = found as [string, Record<string, unknown>];
    if (depot.enabled !== false) return { id, action: 'unchanged' };
    await client.apiCall(`Enabling the online depot ${id}`, 'PATCH', `${VLCM_API.online}/${encodeURIComponent(id)}`, { enabled: true });
    return { id, action: 'updated' };
  }
  const id = await client.apiCall('Adding the online depot', 'POST', VLCM_API.online, { location, ...(description ? { description } : {}) });
  if (typeof id !== 'string' || id === '') throw new DepotkitError('Adding the online depot failed: the server answered without its id.', EXIT.problems);
  return { id, action: 'added' };
}

/** Sets the UMDS depot unless it is that location already, enabled. */
async function ensureUmds(client: MgmtClient, location: string, description: string | undefined): Promise<Pick<VcenterDepotReport, 'action'>> {
  let current: unknown;
  try {
    current = await client.apiCall('Reading the UMDS depot', 'GET', VLCM_API.umds);
  } catch (err) {
    // No UMDS depot is set: the get answers NOT_FOUND.
    if (!(err instanceof MgmtApiError && err.status === 404)) throw err;
  }
  if (isObject(current) && typeof current.location === 'string' && sameLocation(current.location, location) && current.enabled !== false) {
    return { action: 'unchanged' };
  }
  await client.apiCall('Setting the UMDS depot', 'PUT', VLCM_API.umds, { location, enabled: true, ...(description ? { description } : {}) });
  return { action: isObject(current) ? 'updated' : 'added' };
}

function sameLocation(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/** The messages of a task's error (the std error: `messages[].default_message`). */
function errorMessages(error: unknown): string[] {
  const list = isObject(error) && Array.isArray(error.messages) ? error.messages : [];
  return list.map((m) => (isObject(m) && typeof m.default_message === 'string' ? m.default_message : '')).filter((m) => m !== '');
}

/** Has vCenter sync its depots and waits for the task's end; its status and messages. */
export async function syncAndWait(
  client: MgmtClient,
  opts: Pick<VcenterDepotOptions, 'syncTimeoutMs' | 'pollMs' | 'onProgress'> = {},
): Promise<VcenterDepotReport['sync']> {
  const task = await client.apiCall('Syncing the depots', 'POST', `${VLCM_API.depots}?action=${VLCM_API.syncAction}&${VLCM_API.taskQuery}=true`);
  if (typeof task !== 'string' || task === '') throw new DepotkitError('Syncing the depots failed: the server answered without a task id.', EXIT.problems);
  const deadline = Date.now() + (opts.syncTimeoutMs ?? VCENTER_DEPOT_DEFAULTS.syncTimeoutMs);
  for (;;) {
    const info = await client.apiCall(`Reading the sync task ${task}`, 'GET', `${VLCM_API.tasks}/${encodeURIComponent(task)}`);
    const status = (isObject(info) ? info.status : undefined) as CisTaskStatus | undefined;
    const progress = isObject(info) && isObject(info.progress) ? info.progress : {};
    opts.onProgress?.({
      status: status ?? CIS_TASK_STATUS.pending,
      ...(typeof progress.completed === 'number' ? { completed: progress.completed } : {}),
      ...(typeof progress.total === 'number' ? { total: progress.total } : {}),
    });
    if (status === CIS_TASK_STATUS.succeeded || status === CIS_TASK_STATUS.failed) {
      return { task, status, messages: errorMessages(isObject(info) ? info.error : undefined) };
    }
    if (Date.now() >= deadline) {
      throw new DepotkitError(
        `The sync task ${task} has not ended after ${Math.round((opts.syncTimeoutMs ?? VCENTER_DEPOT_DEFAULTS.syncTimeoutMs) / 1000)} s (status ${status ?? 'unknown'}).`,
        EXIT.problems,
        'Look at the task in the vSphere Client, or run again with a longer `syncTimeout`.',
      );
    }
    await sleep(opts.pollMs ?? DEFAULT_POLL_MS);
  }
}

/** Every component and version the vCenter's depot content lists. */
export async function listedComponents(client: MgmtClient): Promise<ListedComponent[]> {
  const list = await client.apiCall('Listing the depot content', 'GET', `${VLCM_API.content}/components`);
  if (!Array.isArray(list)) throw new DepotkitError('Listing the depot content failed: the server answered without a list.', EXIT.problems);
  return list.filter(isObject).map((c) => ({
    name: String(c.name),
    ...(typeof c.vendor === 'string' ? { vendor: c.vendor } : {}),
    versions: Array.isArray(c.versions) ? c.versions.map((v) => (isObject(v) ? String(v.version) : '')).filter((v) => v !== '') : [],
  }));
}

/** Why a failed sync failed, in words a user acts on: the depot's CA not trusted, its certificate not naming its host, or vLCM's own words. */
export function syncProblem(server: string, depot: string, messages: string[]): { problem: string; fix: string } {
  const all = messages.join(' ');
  const cause = messages.slice(1).join(' ') || all;
  if (all.includes(VLCM_HOSTNAME_MISMATCH_WORDS)) {
    return {
      problem: `vCenter refuses the depot's certificate: it does not name the host of ${depot} (${cause}).`,
      fix: "Give the depot's URL with a name its certificate holds, or issue its certificate for the name vCenter uses with `issueCert`.",
    };
  }
  if (VLCM_UNTRUSTED_CA_WORDS.some((w) => all.includes(w))) {
    return {
      problem: `vCenter does not trust the CA of the depot's certificate: it is not among vCenter's trusted root chains (${cause}).`,
      fix: `Put the depot's CA there first with \`trustVcenterCa\` \`server\` ${server} \`caPems\` <depot-ca.pem>, then connect the depot again.`,
    };
  }
  return {
    problem: `vCenter cannot sync the depot: ${all || 'the sync task failed without a message'}`,
    fix: `Check the depot as vLCM reads it: \`checkEsxDepot\` ${depot} \`caPems\` <depot-ca.pem>.`,
  };
}

/**
 * `vcenter depot`: the ESX depot among the vCenter's depots (an online depot, or the UMDS depot when
 * asked), added only when it is not there yet (the depots are listed first), then a sync of every
 * depot waited for, and the components and versions the vCenter then lists.
 */
export async function connectVcenterDepot(opts: VcenterDepotOptions): Promise<VcenterDepotReport> {
  const location = depotLocation(opts.depot);
  const client = await connectMgmt(opts);
  try {
    const kind = opts.umds ? 'umds' : 'online';
    const set = opts.umds ? await ensureUmds(client, location, opts.description) : await ensureOnline(client, location, opts.description);
    const notes: string[] = [];
    if (!opts.umds) {
      const umds = await client.apiCall('Reading the UMDS depot', 'GET', VLCM_API.umds).catch(() => undefined);
      if (isObject(umds) && umds.enabled !== false)
        notes.push(`A UMDS depot is set (${String(umds.location)}): vCenter ignores its online depots while it is.`);
    }
    const sync = await syncAndWait(client, opts);
    const ok = sync.status === CIS_TASK_STATUS.succeeded;
    const server = client.origin.origin;
    return {
      server,
      depot: location,
      kind,
      ...set,
      sync,
      ok,
      components: await listedComponents(client),
      ...(ok ? {} : syncProblem(server, location, sync.messages)),
      notes,
    };
  } finally {
    await client.close();
  }
}
