import type { ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { until, type PollOptions } from './poll.js';

/**
 * `count` different ports on 127.0.0.1 that nothing listens on now: the kernel's picks for port 0, all held until
 * the last is known, then released. For peers that cannot be told to pick one themselves (nginx, a server started
 * with a port of its own). Asked for one at a time, the kernel may pick a port it has just released again: a
 * rehearsal once got the same port for two simulators.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))));
  }
}

/** One port on 127.0.0.1 that nothing listens on now (freePorts). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** The same port, named for its use: one to connect to and be refused at once. */
export const closedPort: () => Promise<number> = freePort;

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Waits until something accepts connections on 127.0.0.1:`port` (`opts.failIf`: the server ended first). */
export function untilAccepting(port: number, what: string, opts?: PollOptions): Promise<void> {
  return until(() => portAccepts(port), what, opts);
}

/** Why a child process cannot be waited for any more: it ended (for PollOptions.failIf). */
export function ended(child: ChildProcess, output: () => string = () => ''): () => string | undefined {
  return () => (child.exitCode !== null || child.signalCode !== null ? `it ended (${child.exitCode ?? child.signalCode}) ${output()}`.trim() : undefined);
}
