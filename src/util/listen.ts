import type { Server } from 'node:net';
import { DepotkitError, EXIT, usageError } from './errors.js';

/** The port is taken: a command that has its own way to choose another (`npm start -- --port`) says so. */
export class PortInUseError extends DepotkitError {
  constructor(
    readonly port: number,
    host: string,
  ) {
    super(`Port ${port} on ${host} is already in use.`, EXIT.usage, 'Pick another with `port` (0 picks a free one).');
  }
}

/**
 * Listens on `host:port` (0: any free port), turning the failures a user
 * causes into one sentence with exit 2: a busy port, a privileged one, an
 * address this machine does not have.
 */
export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new PortInUseError(port, host));
      else if (err.code === 'EACCES')
        reject(
          usageError(
            `Not allowed to listen on port ${port}; ports below 1024 need privileges.`,
            'Give a `port` of 1024 or above, such as 8443, or run with the capability to bind low ports.',
          ),
        );
      else if (err.code === 'EADDRNOTAVAIL') reject(usageError(`${host} is not an address of this machine.`));
      else reject(err);
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
