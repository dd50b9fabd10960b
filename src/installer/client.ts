import { decodeJwt } from 'jose';
import { Agent, request } from 'undici';
import { INSTALLER_API, INSTALLER_ERROR_CODES, INSTALLER_TOKEN_CREATED_STATUSES, apiPath } from '../constants.js';
import { DepotkitError, EXIT, usageError } from '../util/errors.js';
import { isTlsTrustError } from '../util/tls-errors.js';
import {
  isObject,
  parseErrorBody,
  withoutPassword,
  type ApplianceInfo,
  type BundleDownloadStatusInfo,
  type DepotSettings,
  type DepotSyncInfo,
  type PageOfTrustedCertificate,
  type ReleaseComponentDetail,
  type TokenPair,
} from './wire.js';

/** How the client trusts the installer's own HTTPS certificate. */
export interface InstallerTrust {
  /** Certificates (the installer's self-signed one, or its CA), PEM; the system store when absent. */
  caPems?: string[];
  /** Skip verification: only when asked for explicitly. */
  insecure?: boolean;
}

export interface InstallerClientOptions {
  /** `https://host[:port]`; a path is ignored. */
  url: string;
  user: string;
  password: string;
  trust?: InstallerTrust;
  /** Per-request timeout (connect, headers, body); 30 s by default. */
  timeoutMs?: number;
  /**
   * Timeout of the depot settings update, during which the installer
   * validates the depot (HEAD and GETs, each with its own timeout); at least
   * DEPOT_UPDATE_TIMEOUT_MS, so that the client never gives up before the
   * installer answers.
   */
  depotUpdateTimeoutMs?: number;
  /** Attempts after the first on network errors and 5xx answers; 3 by default. */
  retries?: number;
  /** First back-off delay, doubled per attempt; 250 ms by default. */
  backoffMs?: number;
  /** Refresh the access token when it has less than this left; 60 s by default. */
  refreshMarginSeconds?: number;
  /** Milliseconds since the epoch; tests move it. */
  clock?: () => number;
}

/** The installer refused a call: keyed on its errorCode, with its message and remediation. */
export class InstallerApiError extends DepotkitError {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly errorCode: string | undefined,
    readonly apiMessage: string | undefined,
    readonly remediation: string | undefined,
  ) {
    const what = errorCode ? `${errorCode}: ${apiMessage ?? `HTTP ${status}`}` : `HTTP ${status}${apiMessage ? ` ${apiMessage}` : ''}`;
    super(`${operation} failed: ${what}`, EXIT.problems, remediation);
    this.name = 'InstallerApiError';
  }
}

/** The installer could not be reached or its TLS was refused. */
export class InstallerConnectionError extends DepotkitError {
  constructor(
    message: string,
    readonly code: string | undefined,
    hint?: string,
  ) {
    super(message, EXIT.problems, hint);
    this.name = 'InstallerConnectionError';
  }
}

export interface Reply {
  status: number;
  body: unknown;
}

/** The depot update waits at least this long: the installer validates the depot before it answers. */
export const DEPOT_UPDATE_TIMEOUT_MS = 120_000;
/** How long an interrupted command waits for its log-in and its token revocation. */
const ABORT_GRACE_MS = 3_000;

/**
 * Failures before the request reached the server: any method may be sent
 * again after these.
 */
const CONNECT_PHASE_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Network failures worth another attempt for GET and DELETE, which are
 * idempotent; TLS verification failures are not among them.
 */
const RETRYABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

interface SendOptions {
  retries?: number;
  /** Headers and body timeout of this request, instead of the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

function codeOf(err: unknown): string | undefined {
  const own = (err as { code?: unknown })?.code;
  const cause = (err as { cause?: { code?: unknown } })?.cause?.code;
  if (typeof cause === 'string' && (typeof own !== 'string' || own === 'UND_ERR_CONNECT' || own === 'UND_ERR_SOCKET')) return cause;
  return typeof own === 'string' ? own : typeof cause === 'string' ? cause : undefined;
}

/** The installer's origin from a URL; only https, as the API needs it. */
export function parseInstallerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    throw usageError(`"${text}" is not an installer URL; give it as https://host[:port].`);
  }
  if (url.protocol !== 'https:') throw usageError(`The installer API is served over HTTPS, not ${url.protocol.slice(0, -1)}: use https://${url.host}.`);
  return new URL(url.origin);
}

/**
 * A client of the installer API. It logs in with a user name and password,
 * refreshes the access token before it expires and once after a 401, and
 * revokes its refresh token on close. The password stays in memory only, to
 * log in again when the refresh token is gone.
 */
export class InstallerClient {
  private accessToken?: string;
  private refreshId?: string;
  /** A log-in under way: an interrupted command waits for it, to revoke what it brings. */
  private loggingIn?: Promise<void>;
  /** Set by close({abort}): no new call goes out, only the revocation. */
  private aborted = false;
  private readonly agent: Agent;
  private readonly clock: () => number;
  /** Counters for reports and tests. */
  readonly stats = { logins: 0, refreshes: 0, retries: 0, requests: 0 };

  constructor(
    readonly origin: URL,
    private readonly opts: InstallerClientOptions,
  ) {
    const timeout = opts.timeoutMs ?? 30_000;
    this.clock = opts.clock ?? Date.now;
    this.agent = new Agent({
      connect: { ca: opts.trust?.caPems, rejectUnauthorized: !opts.trust?.insecure, timeout },
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
  }

  /** Creates a client and logs in. */
  static async connect(opts: InstallerClientOptions): Promise<InstallerClient> {
    const client = new InstallerClient(parseInstallerUrl(opts.url), opts);
    try {
      await client.login();
    } catch (err) {
      await client.agent.close();
      throw err;
    }
    return client;
  }

  async login(): Promise<void> {
    const pending = this.doLogin();
    this.loggingIn = pending;
    try {
      await pending;
    } finally {
      if (this.loggingIn === pending) this.loggingIn = undefined;
    }
  }

  private async doLogin(): Promise<void> {
    const reply = await this.send('POST', INSTALLER_API.tokens, { username: this.opts.user, password: this.opts.password });
    if (!(INSTALLER_TOKEN_CREATED_STATUSES as readonly number[]).includes(reply.status)) throw this.apiError('Log-in', reply);
    const pair = reply.body as Partial<TokenPair>;
    if (typeof pair?.accessToken !== 'string' || typeof pair.refreshToken?.id !== 'string') {
      throw new InstallerConnectionError(`${this.origin.href} answered the log-in without an access token: is it an installer?`, undefined);
    }
    this.accessToken = pair.accessToken;
    this.refreshId = pair.refreshToken.id;
    this.stats.logins++;
  }

  /** A new access token from the refresh token; a new log-in when the refresh token is gone. */
  async refresh(): Promise<void> {
    if (this.refreshId) {
      const reply = await this.send('PATCH', INSTALLER_API.refreshAccessToken, this.refreshId);
      if (reply.status === 200 && typeof reply.body === 'string') {
        this.accessToken = reply.body;
        this.stats.refreshes++;
        return;
      }
      if (reply.status !== 404 && reply.status !== 400 && reply.status !== 401) throw this.apiError('Token refresh', reply);
    }
    await this.login();
  }

  /** Seconds until the access token expires (negative when it has; Infinity when the token does not say). */
  tokenSecondsLeft(): number {
    if (!this.accessToken) return -1;
    let exp: unknown;
    try {
      exp = decodeJwt(this.accessToken).exp;
    } catch {
      // An opaque token: its expiry shows as a 401, which refreshes it.
      return Infinity;
    }
    return typeof exp === 'number' ? exp - this.clock() / 1000 : Infinity;
  }

  /** An authenticated call: refreshed before expiry, retried once after a 401. */
  async call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts: SendOptions = {}): Promise<Reply> {
    if (this.aborted) throw new DepotkitError(`The session with ${this.origin.host} was interrupted.`, EXIT.problems);
    if (!this.accessToken) await this.login();
    else if (this.tokenSecondsLeft() < (this.opts.refreshMarginSeconds ?? 60)) await this.refresh();
    let reply = await this.send(method, path, body, this.accessToken, opts);
    if (reply.status === 401) {
      await this.refresh();
      reply = await this.send(method, path, body, this.accessToken, opts);
    }
    return reply;
  }

  /**
   * Revokes the refresh token (best effort) and closes the connections. With
   * `abort` (an interrupted command), a log-in under way gets a few seconds
   * to finish so that its session is revoked too, the revocation itself gets
   * as long, and requests still running are cut off instead of awaited.
   */
  async close(opts: { abort?: boolean } = {}): Promise<void> {
    if (opts.abort) this.aborted = true;
    if (opts.abort && this.loggingIn) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.loggingIn.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ABORT_GRACE_MS)))]);
      clearTimeout(timer);
    }
    const id = this.refreshId;
    this.refreshId = undefined;
    try {
      if (id) await this.send('DELETE', INSTALLER_API.refreshToken, id, undefined, { retries: 0, ...(opts.abort ? { signal: AbortSignal.timeout(ABORT_GRACE_MS) } : {}) });
    } catch {
      // The token expires on its own; a failed revocation must not fail the command.
    } finally {
      this.accessToken = undefined;
      await (opts.abort ? this.agent.destroy() : this.agent.close());
    }
  }

  // ------------------------------------------------------------ operations

  async applianceInfo(): Promise<ApplianceInfo> {
    const reply = await this.call('GET', INSTALLER_API.applianceInfo);
    if (reply.status !== 200 || !isObject(reply.body)) throw this.apiError('Reading the appliance info', reply);
    return reply.body as unknown as ApplianceInfo;
  }

  /**
   * The trusted certificates. The published operation takes no paging
   * parameters and the installers seen answer every certificate in one page
   * (as the simulator does); a page that says there are more is refused
   * rather than taken for the whole list, which idempotent trust relies on.
   */
  async listTrusted(): Promise<PageOfTrustedCertificate> {
    const reply = await this.call('GET', INSTALLER_API.trustedCertificates);
    if (reply.status !== 200 || !isObject(reply.body) || !Array.isArray(reply.body.elements)) throw this.apiError('Listing the trusted certificates', reply);
    const page = reply.body as unknown as PageOfTrustedCertificate;
    const meta = page.pageMetadata;
    if (meta && (meta.totalPages > 1 || meta.totalElements > page.elements.length)) {
      throw new DepotkitError(
        `The installer ${this.origin.host} lists ${meta.totalElements} trusted certificates over ${meta.totalPages} pages and answered only ${page.elements.length}; depotkit reads one page.`,
        EXIT.problems,
      );
    }
    return page;
  }

  /** Imports certificates; answers the raw reply, so that the caller can treat 409 as already trusted. */
  async importTrusted(certificate: string, certificateUsageType: string): Promise<Reply> {
    return this.call('POST', INSTALLER_API.trustedCertificates, { certificate, certificateUsageType });
  }

  async deleteTrusted(alias: string): Promise<boolean> {
    const reply = await this.call('DELETE', `${INSTALLER_API.trustedCertificates}/${encodeURIComponent(alias)}`);
    if (reply.status === 204) return true;
    if (reply.status === 404) return false;
    throw this.apiError(`Deleting the trusted certificate ${alias}`, reply);
  }

  async getDepotSettings(): Promise<DepotSettings> {
    const reply = await this.call('GET', INSTALLER_API.depotSettings);
    if (reply.status !== 200 || !isObject(reply.body)) throw this.apiError('Reading the depot settings', reply);
    return withoutPassword(reply.body as DepotSettings);
  }

  async putDepotSettings(settings: DepotSettings): Promise<void> {
    const timeoutMs = Math.max(this.opts.depotUpdateTimeoutMs ?? DEPOT_UPDATE_TIMEOUT_MS, this.opts.timeoutMs ?? 30_000);
    const reply = await this.call('PUT', INSTALLER_API.depotSettings, settings, { timeoutMs });
    if (reply.status !== 202 && reply.status !== 200) throw this.apiError('Updating the depot settings', reply);
  }

  async getSyncInfo(): Promise<DepotSyncInfo> {
    const reply = await this.call('GET', INSTALLER_API.depotSyncInfo);
    if (reply.status !== 200 || !isObject(reply.body) || typeof reply.body.syncStatus !== 'string') throw this.apiError('Reading the depot sync status', reply);
    return reply.body as unknown as DepotSyncInfo;
  }

  /** Asks the installer to sync the depot's metadata; it answers at once and syncs in the background. */
  async startSync(): Promise<void> {
    const reply = await this.call('PATCH', INSTALLER_API.depotSyncInfo);
    if (reply.status !== 202 && reply.status !== 200) throw this.apiError('Starting the depot sync', reply);
  }

  async releaseComponents(sku: string, releaseVersion: string, imageType: string): Promise<ReleaseComponentDetail[]> {
    const query = new URLSearchParams({ releaseVersion, imageType, automatedInstall: 'true' });
    const reply = await this.call('GET', `${apiPath(INSTALLER_API.releaseComponents, { sku })}?${query}`);
    if (reply.status !== 200 || !isObject(reply.body) || !Array.isArray(reply.body.elements)) throw this.apiError(`Listing the components of ${sku} ${releaseVersion}`, reply);
    return reply.body.elements as ReleaseComponentDetail[];
  }

  /** Asks for a bundle's download: 'started', or 'already-downloaded' (the installer's BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED). */
  async startBundleDownload(id: string): Promise<'started' | 'already-downloaded'> {
    const reply = await this.call('PATCH', apiPath(INSTALLER_API.bundle, { id }), { bundleDownloadSpec: { downloadNow: true } });
    if (reply.status === 202 || reply.status === 200) return 'started';
    if (parseErrorBody(reply.body)?.errorCode === INSTALLER_ERROR_CODES.bundleAlreadyDownloaded) return 'already-downloaded';
    throw this.apiError(`Starting the download of bundle ${id}`, reply);
  }

  async downloadStatus(releaseVersion?: string, imageType?: string): Promise<BundleDownloadStatusInfo[]> {
    const query = new URLSearchParams({ ...(releaseVersion ? { releaseVersion } : {}), ...(imageType ? { imageType } : {}) });
    const reply = await this.call('GET', `${INSTALLER_API.bundleDownloadStatus}${query.size > 0 ? `?${query}` : ''}`);
    if (reply.status !== 200 || !isObject(reply.body) || !Array.isArray(reply.body.elements)) throw this.apiError('Reading the bundle download status', reply);
    return reply.body.elements as BundleDownloadStatusInfo[];
  }

  apiError(operation: string, reply: Reply): InstallerApiError {
    const parsed = parseErrorBody(reply.body);
    return new InstallerApiError(operation, reply.status, parsed?.errorCode, parsed?.message, parsed?.remediationMessage);
  }

  // ------------------------------------------------------------ transport

  /**
   * One request, retried with back-off on network errors and 5xx answers
   * only. POST, PUT and PATCH change state: they are sent again only when the
   * first attempt never reached the installer (connect-phase errors) or it
   * answered 503 (not processed); after a timeout or a reset mid-request the
   * installer may have acted on it, so they fail instead.
   */
  private async send(method: string, path: string, body: unknown, token?: string, opts: SendOptions = {}): Promise<Reply> {
    const retries = opts.retries ?? this.opts.retries ?? 3;
    const idempotent = method === 'GET' || method === 'DELETE';
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const url = new URL(path, this.origin).href;
    for (let attempt = 0; ; attempt++) {
      let reply: Reply | undefined;
      let failure: unknown;
      try {
        this.stats.requests++;
        const res = await request(url, {
          method,
          headers,
          body: payload,
          dispatcher: this.agent,
          ...(opts.timeoutMs ? { headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
        const text = await res.body.text();
        let parsed: unknown = text;
        if (text !== '') {
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON: kept as text for the error message.
          }
        } else parsed = undefined;
        reply = { status: res.statusCode, body: parsed };
      } catch (err) {
        failure = err;
      }
      const code = codeOf(failure) ?? '';
      const retryable = reply
        ? idempotent
          ? reply.status >= 500
          : reply.status === 503
        : (idempotent ? RETRYABLE_CODES : CONNECT_PHASE_CODES).has(code);
      if (!retryable || attempt >= retries) {
        if (reply) return reply;
        throw this.connectionError(failure);
      }
      this.stats.retries++;
      await new Promise((resolve) => setTimeout(resolve, (this.opts.backoffMs ?? 250) * 2 ** attempt));
    }
  }

  private connectionError(err: unknown): InstallerConnectionError {
    const code = codeOf(err);
    const where = this.origin.host;
    if (isTlsTrustError(code)) {
      return new InstallerConnectionError(
        `The installer ${where} presented a certificate this client does not trust (${code}).`,
        code,
        "Pass the installer's certificate (or its CA) with --installer-ca FILE; --insecure skips the check.",
      );
    }
    if (code === 'ENOTFOUND') return new InstallerConnectionError(`The installer host ${this.origin.hostname} cannot be resolved.`, code);
    const detail = (err as { cause?: Error })?.cause?.message ?? (err instanceof Error ? err.message : String(err));
    return new InstallerConnectionError(`Cannot reach the installer ${where}: ${code ?? detail}.`, code, 'Check the URL and that the installer is running.');
  }
}
