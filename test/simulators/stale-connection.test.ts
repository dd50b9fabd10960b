// The simulated installer's depot validation over a server that closes a kept-alive connection as a request
// arrives on it (a web server's old workers during a reload): sent again once on a new connection, as Java's
// HTTP client does; the first request on a connection is not.
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { probeDepot } from '../../src/simulators/installer/depot-probe.js';
import { DepotTlsClient } from '../../src/simulators/installer/depot-tls.js';
import { ServiceLog } from '../../src/simulators/installer/log.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/**
 * A plain HTTP depot whose connections each answer `answered` requests, then close on the next without a byte.
 * Counts the connections and the requests that reached it.
 */
async function closingDepot(answered: number): Promise<{ port: number; connections: () => number; requests: () => number }> {
  let connections = 0;
  let requests = 0;
  server = createServer((socket: Socket) => {
    connections++;
    let served = 0;
    socket.setEncoding('latin1').on('data', (data: string) => {
      for (const head of data.split('\r\n\r\n').filter((h) => h.length > 0)) {
        requests++;
        if (served++ >= answered) {
          socket.destroy();
          return;
        }
        const body = head.startsWith('HEAD') ? '' : '{}';
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n${body}`);
      }
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { port, connections: () => connections, requests: () => requests };
}

const validate = (port: number) =>
  probeDepot({ https: false, host: '127.0.0.1', port, prefix: '' }, {}, [], new ServiceLog(Date.now), {
    timeoutMs: 5_000,
    tls: new DepotTlsClient(),
  });

it('sends a request again on a new connection when the kept-alive one is closed before its answer', async () => {
  // HEAD answered, then the GET of the catalog meets a closing connection; each new one answers one request.
  const depot = await closingDepot(1);
  expect(await validate(depot.port)).toEqual({ ok: true });
  // HEAD, GET (closed), GET again, the signature's GET (closed), again: three connections.
  expect(depot.connections()).toBe(3);
  expect(depot.requests()).toBe(5);
});

it('does not send the first request of a connection again: a depot that closes every connection fails', async () => {
  const depot = await closingDepot(0);
  const outcome = await validate(depot.port);
  expect(outcome.ok).toBe(false);
  expect(depot.connections()).toBe(1);
  expect(depot.requests()).toBe(1);
});
