// A worker of `depotkit serve --workers N`: forked by the primary, which hands it the listening socket once it is prepared.
// Its signals are listened for before anything else is loaded (the server's modules come with 'start'): until
// then Node's default action for SIGHUP and SIGTERM would end it.
import type { Server as NetServer } from 'node:net';
import { errorMessage } from '../util/errors.js';
import type { DepotServer, PreparedDepotServer } from './index.js';
import type { MetricsSnapshot } from './metrics.js';
import type { StatusData } from './status-data.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

let prepared: PreparedDepotServer | undefined;
let server: DepotServer | undefined;
/** Told to listen: the socket is this worker's too from then on. */
let listening = false;
/** A stop signal came while the server was being handed its socket: it stops once serving. */
let stopWhenServing = false;
let graceMs = 0;
let shuttingDown: Promise<void> | undefined;
// The primary's latest look at the depot, which the status page shows.
let status: StatusData | undefined;
// Scrapes this worker answers: the primary sums every process's metrics and sends the text back.
let scrapeId = 0;
const scrapes = new Map<number, (text: string | undefined) => void>();
/** Longer than the primary waits for each process, so that its answer normally comes first. */
const SCRAPE_TIMEOUT_MS = 5_000;

/** Every serving process's metrics from the primary; this worker's alone if the primary cannot answer. */
function everyonesMetrics(own: MetricsSnapshot): Promise<string> {
  const id = ++scrapeId;
  return new Promise<string | undefined>((resolve) => {
    if (!process.connected) return resolve(undefined);
    const timer = setTimeout(() => finish(undefined), SCRAPE_TIMEOUT_MS);
    const finish = (text: string | undefined) => {
      clearTimeout(timer);
      scrapes.delete(id);
      resolve(text);
    };
    scrapes.set(id, finish);
    send({ type: 'metrics-request', id, snapshot: own });
  }).then(async (text) => text ?? (await import('./metrics.js')).aggregateMetrics([own]));
}

function send(message: FromWorker, then?: () => void): void {
  process.send?.(message, undefined, undefined, then);
}

function fail(err: unknown): void {
  send({ type: 'failed', message: errorMessage(err) }, () => process.exit(1));
}

function shutdown(): void {
  shuttingDown ??= (server?.close(graceMs) ?? Promise.resolve()).then(() => process.exit(0));
}

/**
 * A stop signal. Before this worker is handed the socket there is nothing to finish: it ends at once (the
 * primary starts another while it is not stopping itself). While it is being handed the socket, it stops once
 * it serves, so that no connection it accepted is dropped.
 */
function stopSignal(): void {
  if (server || !listening) shutdown();
  else stopWhenServing = true;
}

// The terminal and service managers signal the whole process group: a worker finishes its downloads
// like the primary does, and leaves reloading (SIGHUP) to the primary, which tells it.
process.on('SIGTERM', stopSignal);
process.on('SIGINT', stopSignal);
process.on('SIGHUP', () => {});
process.on('disconnect', () => {
  for (const finish of [...scrapes.values()]) finish(undefined);
  shutdown();
});

process.on('message', (message: ToWorker, handle?: NetServer) => {
  switch (message.type) {
    case 'start':
      graceMs = message.graceMs;
      status = message.status;
      import('./index.js')
        .then(({ prepareDepotServer }) => prepareDepotServer(message.options, { status: () => status, collectMetrics: everyonesMetrics }))
        .then((p) => {
          prepared = p;
          send({ type: 'prepared' });
        }, fail);
      break;
    case 'listen':
      if (!prepared || !handle) {
        fail(new Error('The server worker was told to listen before it was prepared, or without the socket.'));
        break;
      }
      // Synchronously, in this tick: see PreparedDepotServer.listen.
      listening = true;
      prepared.listen(handle).then((s) => {
        server = s;
        send({ type: 'listening', url: s.url, port: s.port });
        if (stopWhenServing) shutdown();
      }, fail);
      break;
    case 'reload':
      (server ? server.reloadTls(message.material) : Promise.resolve()).then(
        () => send({ type: 'reloaded' }),
        (err: unknown) => send({ type: 'reloaded', error: errorMessage(err) }),
      );
      break;
    case 'reopen-log':
      (server ? server.reopenLog() : Promise.resolve()).then(
        () => send({ type: 'log-reopened' }),
        (err: unknown) => send({ type: 'log-reopened', error: errorMessage(err) }),
      );
      break;
    case 'shutdown':
      shutdown();
      break;
    case 'status':
      status = message.data;
      break;
    case 'metrics-collect':
      // Before it is prepared a worker has served nothing: an empty snapshot.
      send({ type: 'metrics-snapshot', id: message.id, snapshot: server ? server.metricsSnapshot() : [] });
      break;
    case 'metrics-text':
      scrapes.get(message.id)?.(message.text);
      break;
  }
});

send({ type: 'ready' });
