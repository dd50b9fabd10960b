// A worker of `depotkit serve --workers N`: forked by the primary, which hands it the listening socket once it is prepared.
import type { Server as NetServer } from 'node:net';
import { errorMessage } from '../util/errors.js';
import { prepareDepotServer, type DepotServer, type PreparedDepotServer } from './index.js';
import type { FromWorker, ToWorker } from './workers.js';

let prepared: PreparedDepotServer | undefined;
let server: DepotServer | undefined;
let graceMs = 0;
let shuttingDown: Promise<void> | undefined;

function send(message: FromWorker, then?: () => void): void {
  process.send?.(message, undefined, undefined, then);
}

function fail(err: unknown): void {
  send({ type: 'failed', message: errorMessage(err) }, () => process.exit(1));
}

function shutdown(): void {
  shuttingDown ??= (server?.close(graceMs) ?? Promise.resolve()).then(() => process.exit(0));
}

// The terminal and service managers signal the whole process group: a worker finishes its downloads
// like the primary does, and leaves reloading (SIGHUP) to the primary, which tells it.
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.on('SIGHUP', () => {});
process.on('disconnect', shutdown);

process.on('message', (message: ToWorker, handle?: NetServer) => {
  switch (message.type) {
    case 'start':
      graceMs = message.graceMs;
      prepareDepotServer(message.options).then((p) => {
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
      prepared.listen(handle).then((s) => {
        server = s;
        send({ type: 'listening', url: s.url, port: s.port });
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
  }
});

send({ type: 'ready' });
