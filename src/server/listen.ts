import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { usageError } from '../util/errors.js';
import { listenOn } from '../util/listen.js';
import type { Serving } from './serving.js';
import type { StatusData } from './status-data.js';
import { loadTlsMaterial, secureOptions, type TlsMaterial } from './tls.js';
import type { DepotServer } from './types.js';
import { urlHost } from '../util/url.js';

function shownHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return urlHost(host);
}

/** Starts accepting (see PreparedDepotServer.listen), and the server from then on. */
export async function listenDepotServer(s: Serving, shared: NetServer | undefined): Promise<DepotServer> {
  const { server, log, auth } = s;
  try {
    // A socket handed over by another process is listening already; a port of our own may be taken.
    if (shared) await new Promise<void>((resolve, reject) => server.once('error', reject).listen(shared, () => resolve()));
    else await listenOn(server, s.opts.port ?? 0, s.host);
  } catch (err) {
    await log?.close();
    await auth?.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const refreshStatus = () => lookAgain(s, port);
  // Synchronously after listening, before any request is handled: the page waits for this first look.
  if (!s.hooks.status) void refreshStatus().catch(() => {});
  return {
    url: `${s.material ? 'https' : 'http'}://${shownHost(s.host)}:${port}`,
    port,
    listener: server,
    async close(graceMs = 0) {
      await s.tracker.close(graceMs);
      await log?.close();
      await auth?.close();
    },
    async reloadTls(next) {
      try {
        await reloadCredentials(s, next);
      } finally {
        // Whatever became of the certificate, the depot is looked at again (a file deleted or added since).
        if (!s.hooks.status) await refreshStatus().catch(() => {});
      }
    },
    async reopenLog() {
      await log?.reopen();
    },
    status: () => s.pages.status(),
    refreshStatus,
    metricsSnapshot: () => s.metrics.snapshot(),
  };
}

/** The certificate and key for new connections (files re-read, or `next`), and the htpasswd file again. */
async function reloadCredentials(s: Serving, next: TlsMaterial | undefined): Promise<void> {
  const tlsSource = s.opts.tls;
  if (tlsSource) {
    const fresh = next ?? (await loadTlsMaterial(tlsSource));
    (s.server as HttpsServer).setSecureContext(secureOptions(fresh));
    s.certPem = fresh.certPem;
  } else if (next) {
    throw usageError('This server speaks plain HTTP; it cannot take a certificate.');
  }
  await s.auth?.reload();
}

/** Whether a name resolves on this host, within a second (a look at the depot does not wait on a slow resolver). */
async function resolvesHere(name: string): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 1000)));
  try {
    return await Promise.race([
      lookup(name).then(
        () => true,
        () => false,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Looks at the depot for the status page: its root as given (served files resolve inside its realpath), and
 * the URL as the certificate names it. A failed look keeps the previous one and is thrown.
 */
function lookAgain(s: Serving, port: number): Promise<StatusData> {
  const previous = s.ownStatus;
  const next = (async () => {
    const look = await import('./status-data.js');
    const { url, reachVia } = await look.installerUrl(s.certPem, s.host, port, hostname().toLowerCase() || 'localhost', resolvesHere);
    const auth = s.opts.auth === undefined ? undefined : 'htpasswdFile' in s.opts.auth ? { htpasswd: true as const } : { user: s.opts.auth.user };
    const keyFile = s.opts.keyFile ?? (s.opts.tls && 'keyFile' in s.opts.tls ? s.opts.tls.keyFile : undefined);
    return look.statusData(s.opts.root, {
      certPem: s.certPem,
      url,
      ...(reachVia ? { reachVia } : {}),
      auth,
      openPrefixes: s.given,
      ...(keyFile ? { keyFile } : {}),
    });
  })();
  s.ownStatus = next.catch(() => previous);
  return next;
}
