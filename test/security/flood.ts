// Clients of a password flood on `depotkit serve`, for the flood tests and scripts/bench/auth-fair.ts: wrong
// passwords from many loopback addresses, connections that never finish a request, and one request timed.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect, type TLSSocket } from 'node:tls';
import { basic } from '../server/helpers.js';

export interface Timed {
  /** 0 when the request failed without an answer. */
  status: number;
  ms: number;
  body: Buffer;
}

export interface Target {
  port: number;
  /** The CA of the server's certificate, which names localhost. */
  ca: string;
  path: string;
}

/** One GET from `localAddress` (any of 127.0.0.0/8 on Linux), on a new connection unless `agent` keeps one. */
export function timedGet(target: Target, authorization: string, localAddress: string, agent: Agent | false = false): Promise<Timed> {
  const start = performance.now();
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port: target.port, path: target.path, agent, ca: target.ca, servername: 'localhost', localAddress };
    const req = request({ ...options, headers: { authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, body: Buffer.concat(chunks) }));
      res.once('error', () => resolve({ status: 0, ms: performance.now() - start, body: Buffer.alloc(0) }));
    });
    req.setTimeout(60_000, () => req.destroy());
    req.once('error', () => resolve({ status: 0, ms: performance.now() - start, body: Buffer.alloc(0) }));
    req.end();
  });
}

export interface Flood {
  /** Answers so far by status (0: no answer). */
  readonly answers: Map<number, number>;
  /** Stops every client, its request under way cut; resolves with the answers. */
  stop(): Promise<Map<number, number>>;
}

/**
 * `perAddress` clients from each of `addresses`, each on its own kept-alive connection, sending a new wrong
 * password for `user` as soon as the previous one is answered, whatever the answer (an attacker does not wait
 * for Retry-After).
 */
export function floodWrongPasswords(target: Target, user: string, addresses: string[], perAddress: number): Flood {
  const answers = new Map<number, number>();
  let running = true;
  const agents: Agent[] = [];
  const client = async (localAddress: string) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    while (running) {
      const { status } = await timedGet(target, basic(user, randomBytes(9).toString('base64')), localAddress, agent);
      answers.set(status, (answers.get(status) ?? 0) + 1);
      // A refused connection is answered at once: yield so that the loop never spins without I/O.
      if (status === 0) await new Promise((r) => setTimeout(r, 10));
    }
  };
  const clients = addresses.flatMap((a) => Array.from({ length: perAddress }, () => client(a)));
  return {
    answers,
    async stop() {
      running = false;
      for (const agent of agents) agent.destroy();
      await Promise.all(clients);
      return answers;
    },
  };
}

/** `count` (at most 254) addresses 127.<third>.0.1, .2, ... */
export function loopbackAddresses(third: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `127.${third}.0.${1 + i}`);
}

/**
 * Slowloris: `count` TLS connections that start a request and never finish its header, one more header line
 * every 10 s. Resolves once all are open (at most 50 handshakes at a time); `close` ends them.
 */
export async function holdConnections(target: Target, count: number, localAddress: string): Promise<{ close(): void }> {
  const sockets: TLSSocket[] = [];
  const open = () =>
    new Promise<void>((resolve) => {
      const socket = netConnect({ host: '127.0.0.1', port: target.port, localAddress });
      const s = connect({ socket, ca: target.ca, servername: 'localhost' }, () => {
        s.write(`GET ${target.path} HTTP/1.1\r\nHost: localhost\r\n`);
        resolve();
      });
      s.on('error', () => resolve());
      sockets.push(s);
    });
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, open));
  const drip = setInterval(() => {
    for (const s of sockets) if (s.writable) s.write('X-Slow: 1\r\n');
  }, 10_000);
  return {
    close() {
      clearInterval(drip);
      for (const s of sockets) s.destroy();
    },
  };
}
