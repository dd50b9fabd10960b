// A worker of `depotkit serve --workers N`: forked by the primary, which hands it the listening socket with 'start'.
import type { Server as NetServer } from 'node:net';
import { errorMessage } from '../util/errors.js';
import { startDepotServer, type DepotServer } from './index.js';
import type { FromWorker, ToWorker } from './workers.js';

let server: DepotServer | undefined;
let graceMs = 0;
let shuttingDown: Promise<void> | undefined;

function send(message: FromWorker, then?: () => void): void {
  process.send?.(message, undefined, undefined, then);
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
      if (!handle) {
        send({ type: 'failed', message: 'The server worker was not given the listening socket.' }, () => process.exit(1));
        break;
      }
      startDepotServer(message.options, handle).then(
        (s) => {
          server = s;
          send({ type: 'listening', url: s.url, port: s.port });
        },
        (err: unknown) => {
          send({ type: 'failed', message: errorMessage(err) }, () => process.exit(1));
        },
      );
      break;
    case 'reload':
      (server ? server.reloadTls(message.material) : Promise.resolve()).then(
        () => send({ type: 'reloaded' }),
        (err: unknown) => send({ type: 'reloaded', error: errorMessage(err) }),
      );
      break;
    case 'shutdown':
      shutdown();
      break;
  }
});

send({ type: 'ready' });
