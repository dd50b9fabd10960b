import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, rootCertificates } from 'node:tls';
import { PROXY_AUTH_REQUIRED } from '../constants.js';
import { isTlsTrustError } from '../util/tls-errors.js';
import { describeNetworkFailure, networkErrorCode } from './errors.js';
import type { ProxyRoute } from './proxy.js';

/**
 * What went wrong between depotkit and the proxy, or the proxy's refusal to
 * open a tunnel (`status`): the proxy's failure, not the depot's. Its message
 * names the proxy as `route.shown`, never with a password.
 */
export class ProxyFailure extends Error {
  constructor(
    readonly route: ProxyRoute,
    /** host:port the tunnel was asked for. */
    readonly target: string,
    readonly failure: { status: number; schemes: string[] } | { cause: unknown },
  ) {
    super(proxyFailureWords(route, target, failure));
    this.name = 'ProxyFailure';
  }
}

function proxyFailureWords(route: ProxyRoute, target: string, failure: ProxyFailure['failure']): string {
  if ('status' in failure) return `the proxy ${route.shown} did not open a connection to ${target}: it answered ${failure.status}`;
  const code = networkErrorCode(failure.cause);
  if (isTlsTrustError(code)) return `the proxy ${route.shown} did not pass the TLS checks (${code})`;
  return `the proxy ${route.shown} could not be reached: ${describeNetworkFailure(code, failure.cause)}`;
}

/** A connection to the proxy itself: TCP, and TLS for an https:// one, checked against the public roots and `caPems`. */
function toProxy(route: ProxyRoute, caPems: readonly string[] | undefined): Promise<Socket> {
  const host = route.uri.hostname.replace(/^\[(.*)\]$/, '$1');
  const https = route.uri.protocol === 'https:';
  const port = Number(route.uri.port || (https ? 443 : 80));
  return new Promise((done, fail) => {
    const socket = https
      ? tlsConnect({ host, port, servername: host, ...(caPems?.length ? { ca: [...rootCertificates, ...caPems] } : {}) })
      : tcpConnect({ host, port });
    socket.once('error', fail).once(https ? 'secureConnect' : 'connect', () => {
      socket.off('error', fail);
      done(socket);
    });
  });
}

/** The proxy's answer to CONNECT, up to the blank line: its status and the schemes it asks credentials in. */
function connectAnswer(socket: Socket): Promise<{ status: number; schemes: string[] }> {
  return new Promise((done, fail) => {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return head.length > 64 * 1024 && fail(new Error('the proxy sent a header longer than 64 KiB'));
      // Not paused: the HTTP client that takes the socket next reads it by listening, which resumes no paused stream.
      socket.off('data', onData).off('error', fail).off('end', closed);
      // Bytes past the header belong to the tunnel (a server that speaks first); none are expected before TLS.
      if (end + 4 < head.length) socket.unshift(Buffer.from(head.slice(end + 4), 'latin1'));
      const lines = head.slice(0, end).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const schemes = lines
        .slice(1)
        .filter((l) => l.toLowerCase().startsWith(`${PROXY_AUTH_REQUIRED.challengeHeader}:`))
        .map(
          (l) =>
            l
              .slice(l.indexOf(':') + 1)
              .trim()
              .split(/\s+/)[0]!,
        )
        .filter(Boolean);
      done({ status, schemes });
    };
    const closed = () => fail(Object.assign(new Error('the proxy closed the connection'), { code: 'ECONNRESET' }));
    socket.on('data', onData).once('error', fail).once('end', closed);
  });
}

/**
 * A tunnel (CONNECT) through the proxy to `host:port`, with the proxy's credentials; the depot's TLS
 * is then checked inside it as without a proxy. Whatever fails on the way to the proxy, or a CONNECT
 * it refuses, is a ProxyFailure. `opened` is told each socket as it opens, to be closed on a timeout.
 */
export async function tunnel(
  route: ProxyRoute,
  host: string,
  port: number,
  caPems: readonly string[] | undefined,
  opened: (s: Socket) => Socket,
): Promise<Socket> {
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  let socket: Socket;
  try {
    socket = opened(await toProxy(route, caPems));
  } catch (cause) {
    throw new ProxyFailure(route, target, { cause });
  }
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${route.authorization ? `Proxy-Authorization: ${route.authorization}\r\n` : ''}\r\n`);
  let answer: { status: number; schemes: string[] };
  try {
    answer = await connectAnswer(socket);
  } catch (cause) {
    socket.destroy();
    throw new ProxyFailure(route, target, { cause });
  }
  if (answer.status === 200) return socket;
  socket.destroy();
  throw new ProxyFailure(route, target, answer);
}
