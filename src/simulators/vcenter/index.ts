import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { MGMT_API, MGMT_DEFAULT_USER, type MgmtApiGeneration } from '../../constants.js';
import { listenOn } from '../../util/listen.js';
import { mgmtApp, type MgmtState } from './app.js';
import { selfSignedCertificate } from './certs.js';
import { MGMT_SIM_RESTART_MS, MGMT_SIM_VERSION } from './literals.js';
import { SessionStore } from './sessions.js';
import { TrustedChains } from './trusted-chains.js';
import { urlHost } from '../../util/url.js';
import { VlcmDepots } from './vlcm-state.js';

export interface MgmtSimulatorOptions {
  /** Address to listen on; 127.0.0.1 by default. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** User name to password; by default the built-in administrator with the lab password `VMware1!`. */
  users?: Record<string, string>;
  /** How long the server stops listening after a replacement; 2000 ms by default. */
  restartMs?: number;
  /** The server's own name: default CN and SAN of CSRs, required in replaced certificates; `host` by default. */
  hostname?: string;
  /** Idle lifetime of an API session; 30 minutes by default. */
  sessionIdleMs?: number;
  /** The appliance's version; 9.0.0.0 by default. */
  version?: string;
  /** API generations served; both by default, ['rest'] acts as a server older than 7.0 Update 2. */
  generations?: MgmtApiGeneration[];
}

export interface MgmtSimulator {
  /** `https://<host>:<port>` */
  url: string;
  port: number;
  hostname: string;
  /** The certificate the server serves (after a replacement: the one it serves once restarted). */
  currentCertPem(): string;
  /** Resolves when the server is listening (at once unless a replacement was accepted and the restart is not over). */
  ready(): Promise<void>;
  /** How many replacements (restarts) happened. */
  restarts(): number;
  /** How many sessions were created. */
  sessionsCreated(): number;
  /** How many sessions are alive (created, not ended, not expired). */
  liveSessions(): number;
  close(): Promise<void>;
}

const DEFAULT_USERS = { [MGMT_DEFAULT_USER]: 'VMware1!' };
const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/**
 * A management server with the certificate API of both generations, on real
 * HTTPS. After a successful replacement it stops listening for `restartMs`,
 * then serves the new certificate on the same port, as the real server's
 * restart of its services does.
 */
export async function startMgmtSimulator(opts: MgmtSimulatorOptions = {}): Promise<MgmtSimulator> {
  const host = opts.host ?? '127.0.0.1';
  const hostname = opts.hostname ?? host;
  const restartMs = opts.restartMs ?? MGMT_SIM_RESTART_MS;
  let server: Server | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let endRestart: (() => void) | undefined;
  let listening: Promise<void> = Promise.resolve();
  let closed = false;
  let restarts = 0;

  const chains = new TrustedChains();
  const state: MgmtState = {
    hostname,
    version: opts.version ?? MGMT_SIM_VERSION,
    users: opts.users ?? DEFAULT_USERS,
    generations: opts.generations ?? (Object.keys(MGMT_API) as MgmtApiGeneration[]),
    sessions: new SessionStore(opts.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS),
    current: await selfSignedCertificate(hostname, host),
    chains,
    vlcm: new VlcmDepots(() => chains.pems()),
    onReplaced: (answered) => {
      restarts++;
      // The restart begins once the answer is out; ready() waits for it from now on.
      // A failed restart (the port taken meanwhile) surfaces through ready(), not as an unhandled rejection.
      const restarted = answered.then(restart);
      restarted.catch(() => {});
      listening = restarted;
    },
  };
  // A fresh install trusts its own first certificate, as a chain of its own.
  state.chains.create([state.current.certPem]);
  const app = mgmtApp(state);

  server = await listen(app, state, host, opts.port ?? 0);
  const port = (server.address() as AddressInfo).port;

  async function restart(): Promise<void> {
    // A restart of the services ends every session and every connection.
    state.sessions.clear();
    await stop(server);
    server = undefined;
    if (closed) return;
    await new Promise<void>((resolve) => {
      endRestart = resolve;
      restartTimer = setTimeout(resolve, restartMs);
    });
    restartTimer = undefined;
    if (!closed) server = await listen(app, state, host, port);
  }

  return {
    url: `https://${urlHost(host)}:${port}`,
    port,
    hostname,
    currentCertPem: () => state.current.certPem,
    ready: () => listening,
    restarts: () => restarts,
    sessionsCreated: () => state.sessions.created,
    liveSessions: () => state.sessions.live(),
    async close() {
      closed = true;
      if (restartTimer) clearTimeout(restartTimer);
      endRestart?.();
      await stop(server);
      server = undefined;
    },
  };
}

function listen(app: Express, state: MgmtState, host: string, port: number): Promise<Server> {
  // The leaf, then its intermediates: a client that trusts only the root can verify the chain.
  const server = createServer({ key: state.current.keyPem, cert: [state.current.certPem, ...(state.current.chainPems ?? [])].join('') }, app);
  return listenOn(server, port, host).then(() => server);
}

function stop(server: Server | undefined): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
