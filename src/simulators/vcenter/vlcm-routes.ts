import type express from 'express';
import type { Request } from 'express';
import { MGMT_ERROR_TYPES, VLCM_API } from '../../constants.js';
import { isObject } from '../../vcenter/wire.js';
import { HttpError, badRequest } from './http-error.js';
import { VLCM_MESSAGE_IDS } from './literals.js';
import type { RequireSession } from './session-routes.js';
import { specOf } from './spec.js';
import type { DepotComponent } from './vlcm-fetch.js';
import type { DepotSettings, VlcmDepots } from './vlcm-state.js';

const invalid = (text: string) => badRequest(text, VLCM_MESSAGE_IDS.depotInvalid);
const notFound = (text: string) => new HttpError(404, MGMT_ERROR_TYPES.notFound, VLCM_MESSAGE_IDS.depotNotFound, text);

/** A location vLCM can fetch: an http or https URL ("Using HTTP is not secure", but it is taken). */
function location(value: unknown, field = 'location'): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${field} must be the URL of the depot.`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw invalid(`${field} "${value}" is not a URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`${field} must be an http or https URL, not ${url.protocol}.`);
  return url.href;
}

function optional<T>(spec: Record<string, unknown>, field: string, type: 'string' | 'boolean'): T | undefined {
  const value = spec[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type) throw invalid(`${field} must be a ${type}.`);
  return value as T;
}

/** A create or set spec: `location` required, `description` empty and `enabled` true when not given. */
function settings(spec: Record<string, unknown>): DepotSettings {
  const ownerdata = optional<string>(spec, 'ownerdata', 'string');
  return {
    location: location(spec.location),
    description: optional<string>(spec, 'description', 'string') ?? '',
    enabled: optional<boolean>(spec, 'enabled', 'boolean') ?? true,
    ...(ownerdata !== undefined ? { ownerdata } : {}),
  };
}

/** An update spec: only what it names changes. */
function update(depot: DepotSettings, spec: Record<string, unknown>): void {
  const enabled = optional<boolean>(spec, 'enabled', 'boolean');
  const description = optional<string>(spec, 'description', 'string');
  if (enabled !== undefined) depot.enabled = enabled;
  if (description !== undefined) depot.description = description;
}

/** True when the request names the task form of its operation (`vmw-task=true`), which is the only form served. */
function asTask(req: Request): boolean {
  return req.query[VLCM_API.taskQuery] === 'true';
}

/** The depot content's component summaries: each component once, its versions sorted. */
function componentSummaries(components: DepotComponent[]): unknown[] {
  const byName = new Map<string, DepotComponent[]>();
  for (const c of components) byName.set(c.name, [...(byName.get(c.name) ?? []), c]);
  return [...byName].map(([name, versions]) => ({
    name,
    display_name: name,
    vendor: versions[0]!.vendor,
    versions: versions
      .sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }))
      .map((v) => ({ version: v.version, display_version: v.version, summary: v.bulletin })),
  }));
}

/** The online depots and the UMDS depot: list, create, get, update, delete; set and delete for the one UMDS depot. */
function registerDepotRoutes(app: express.Express, depots: VlcmDepots, requireSession: RequireSession): void {
  const one = (req: Request): [string, DepotSettings] => {
    const id = String(req.params.depot);
    const depot = depots.online.get(id);
    if (!depot) throw notFound(`No online depot ${id}.`);
    return [id, depot];
  };
  const summary = (d: DepotSettings) => ({ ...d, system_defined: false });

  app.get(VLCM_API.online, (req, res) => {
    requireSession(req);
    res.status(200).json(Object.fromEntries([...depots.online].map(([id, d]) => [id, summary(d)])));
  });
  app.post(VLCM_API.online, (req, res) => {
    requireSession(req);
    const spec = settings(specOf(req, 'api'));
    if ([...depots.online.values()].some((d) => d.location === spec.location)) {
      throw new HttpError(400, MGMT_ERROR_TYPES.alreadyExists, VLCM_MESSAGE_IDS.depotExists, `An online depot at ${spec.location} exists already.`);
    }
    const id = depots.newId('online');
    depots.online.set(id, spec);
    res.status(201).json(id);
  });
  app.get(`${VLCM_API.online}/:depot`, (req, res) => {
    requireSession(req);
    res.status(200).json(summary(one(req)[1]));
  });
  app.patch(`${VLCM_API.online}/:depot`, (req, res) => {
    requireSession(req);
    update(one(req)[1], specOf(req, 'api'));
    res.status(204).end();
  });
  app.delete(`${VLCM_API.online}/:depot`, (req, res) => {
    requireSession(req);
    depots.deleteOnline(one(req)[0]);
    res.status(204).end();
  });

  app.get(VLCM_API.umds, (req, res) => {
    requireSession(req);
    if (!depots.umds) throw notFound('No UMDS depot is set.');
    res.status(200).json(depots.umds);
  });
  app.put(VLCM_API.umds, (req, res) => {
    requireSession(req);
    depots.umds = settings(specOf(req, 'api'));
    res.status(204).end();
  });
  app.patch(VLCM_API.umds, (req, res) => {
    requireSession(req);
    if (!depots.umds) throw notFound('No UMDS depot is set.');
    update(depots.umds, specOf(req, 'api'));
    res.status(204).end();
  });
  app.delete(VLCM_API.umds, (req, res) => {
    requireSession(req);
    if (!depots.umds) throw notFound('No UMDS depot is set.');
    depots.deleteUmds();
    res.status(204).end();
  });
}

/** vLCM's depot API on the /api generation: depots, the sync and offline pulls as tasks, the tasks, the depot content. */
export function registerVlcmRoutes(app: express.Express, depots: VlcmDepots, requireSession: RequireSession): void {
  registerDepotRoutes(app, depots, requireSession);

  app.post(VLCM_API.offline, (req, res, next) => {
    if (!asTask(req)) return next();
    requireSession(req);
    const spec = specOf(req, 'api');
    if (spec.source_type !== VLCM_API.sourceTypes.pull) {
      throw invalid(`source_type must be ${VLCM_API.sourceTypes.pull} with a location (the simulator has no file upload for ${VLCM_API.sourceTypes.push}).`);
    }
    const description = optional<string>(spec, 'description', 'string') ?? '';
    res.status(202).json(depots.createOffline({ location: location(spec.location), description, enabled: true, source_type: spec.source_type }));
  });
  app.delete(`${VLCM_API.offline}/:depot`, (req, res) => {
    requireSession(req);
    const id = String(req.params.depot);
    if (!depots.offline.has(id)) throw notFound(`No offline depot ${id}.`);
    depots.deleteOffline(id);
    res.status(204).end();
  });

  app.post(VLCM_API.depots, (req, res, next) => {
    if (req.query.action !== VLCM_API.syncAction || !asTask(req)) return next();
    requireSession(req);
    // The 9.0 SyncSpec is optional: an empty body is a sync without cleanup.
    if (req.is('application/json') && req.body !== undefined && !isObject(req.body)) throw badRequest('The request body must be a JSON object.');
    res.status(202).json(depots.sync());
  });

  app.get(`${VLCM_API.tasks}/:task`, (req, res) => {
    requireSession(req);
    const task = depots.tasks.get(String(req.params.task));
    if (!task) throw new HttpError(404, MGMT_ERROR_TYPES.notFound, VLCM_MESSAGE_IDS.taskNotFound, `No task ${String(req.params.task)}.`);
    res.status(200).json(task);
  });

  app.get(`${VLCM_API.content}/:kind`, (req, res, next) => {
    if (!(VLCM_API.contentKinds as readonly string[]).includes(String(req.params.kind))) return next();
    requireSession(req);
    // Base images and add-ons are described in metadata whose authoring is not published: the simulator lists none.
    res.status(200).json(req.params.kind === 'components' ? componentSummaries(depots.components()) : []);
  });
}
