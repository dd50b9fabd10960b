import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/**
 * Counts responses in flight per connection, for a shutdown that ends idle
 * connections at once and busy ones as soon as their response is over.
 * Node's own closeIdleConnections() also cuts a connection whose response has
 * ended but is still being flushed to a slow client: a truncated download.
 */
export class ConnectionTracker {
  private readonly inFlight = new Map<Socket, number>();
  private closing = false;

  constructor(
    private readonly server: Server,
    secure: boolean,
  ) {
    // First in line: the HTTP layer's own listener may already have parsed a request on this socket.
    server.prependListener(secure ? 'secureConnection' : 'connection', (socket: Socket) => {
      if (!this.inFlight.has(socket)) this.inFlight.set(socket, 0);
      socket.once('close', () => this.inFlight.delete(socket));
    });
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Wraps the request handler to count its responses; a response is over when its 'close' fires (flushed or cut). */
  wrap(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      const socket = req.socket;
      this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const left = Math.max(0, (this.inFlight.get(socket) ?? 1) - 1);
        this.inFlight.set(socket, left);
        if (this.closing && left === 0) socket.end();
      });
      handler(req, res);
    };
  }

  /** Stops listening, ends idle connections, cuts the rest after `graceMs`; resolves when all are closed. */
  close(graceMs: number): Promise<void> {
    this.closing = true;
    return new Promise((resolve) => {
      const deadline = setTimeout(() => {
        for (const socket of this.inFlight.keys()) socket.destroy();
      }, graceMs);
      // net.Server's close, not http.Server's: the latter would call closeIdleConnections() (see above).
      NetServer.prototype.close.call(this.server, () => {
        clearTimeout(deadline);
        resolve();
      });
      for (const [socket, n] of this.inFlight) if (n === 0) socket.end();
    });
  }
}
