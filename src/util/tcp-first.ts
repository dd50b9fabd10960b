import { connect as tcpConnect, type Socket } from 'node:net';
import type { buildConnector as Connector } from 'undici';
import { buildConnector, errors } from './undici-core.js';

/**
 * undici's TLS connector, but the TCP connection comes first and TLS starts
 * once it stands. undici's own builds the TLS socket (and its OpenSSL state)
 * before the TCP connect; over a fleet where most consumers are down, that
 * was most of the cost of each refused connection. The errors are the same:
 * the socket's (ECONNREFUSED ...) or undici's connect timeout.
 */
export function tcpFirstConnector(options: Connector.BuildOptions & { timeout: number }): Connector.connector {
  const overTls = buildConnector(options);
  return (target, callback) => {
    const port = Number(target.port) || 443;
    const socket: Socket = tcpConnect({ host: target.hostname, port, ...(target.localAddress ? { localAddress: target.localAddress } : {}) });
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', settle);
      if (err) {
        socket.destroy();
        callback(err, null);
      } else overTls({ ...target, httpSocket: socket }, callback);
    };
    const timer = setTimeout(
      () => settle(new errors.ConnectTimeoutError(`Connect Timeout Error (attempted address: ${target.hostname}:${port}, timeout: ${options.timeout}ms)`)),
      options.timeout,
    );
    socket.once('error', settle).once('connect', () => settle(null));
    return socket;
  };
}
