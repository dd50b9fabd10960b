import { INSTALLER_API, INSTALLER_ERROR_CODES, INSTALLER_TOKEN_CREATED_STATUSES, apiPath } from '../constants.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import { JsonTransport, describeNetworkFailure, type Reply } from '../net/index.js';
import { registerSecret } from '../util/scrub.js';
import { isTlsTrustError } from '../util/tls-errors.js';
import { parseHttpsOrigin } from '../util/url.js';
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
import { INSTALLER_DEFAULTS } from './defaults.js';

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
  /** The time each request has, from its start to the answer's last byte; 30 s by default. */
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
    /** The installer's remediationMessage, as the error's fix. */
    remediation: string | undefined,
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
    fix?: string,
  ) {
    super(message, EXIT.problems, fix);
    this.name = 'InstallerConnectionError';
  }
}

/** The depot update waits at least this long: the installer validates the depot before it answers. */
export const DEPOT_UPDATE_TIMEOUT_MS = 120_000;
/** How long an interrupted command waits for its log-in and its token revocation. */
const ABORT_GRACE_MS = 3_000;

interface CallOptions {
  retries?: number;
  /** The time this request has, instead of the client's. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The installer's origin from a URL; only https, as the API needs it. */
export function parseInstallerUrl(text: string): URL {
  return parseHttpsOrigin(text, 'the installer');
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
  private readonly transport: JsonTransport;
  private readonly clock: () => number;
  private readonly counts = { logins: 0, refreshes: 0 };

  constructor(
    readonly origin: URL,
    private readonly opts: InstallerClientOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
    // Given by a library caller, not read by readSecret: hidden from what is printed all the same.
    registerSecret(opts.password);
    this.transport = new JsonTransport({
      origin,
      trust: opts.trust,
      timeoutMs: opts.timeoutMs ?? INSTALLER_DEFAULTS.timeoutMs,
      retries: opts.retries ?? 3,
      backoffMs: opts.backoffMs,
      connectionError: (err, code) => this.connectionError(err, code),
      serverName: 'the installer',
    });
  }

  /** Counters for reports and tests: log-ins, refreshes, requests sent and retried. */
  get stats(): { logins: number; refreshes: number; requests: number; retries: number } {
    return { ...this.counts, ...this.transport.stats };
  }

  /** Creates a client and logs in. */
  static async connect(opts: InstallerClientOptions): Promise<InstallerClient> {
    const client = new InstallerClient(parseInstallerUrl(opts.url), opts);
    try {
      await client.login();
    } catch (err) {
      await client.transport.close();
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
    if (!(INSTALLER_TOKEN_CREATED_STATUSES as readonly number[]).includes(reply.status)) {
      // A web server (a depot, say) has no token API: it refuses the method or knows no such path, with no API error.
      if ((reply.status === 404 || reply.status === 405) && !parseErrorBody(reply.body)?.errorCode)
        throw new InstallerConnectionError(
          `${this.origin.href} does not answer as an installer or SDDC Manager: its log-in answered HTTP ${reply.status}, as a web server does.`,
          undefined,
          'Check the URL given as `installer`: the installer or SDDC Manager, not the depot.',
        );
      throw this.apiError('Log-in', reply);
    }
    const pair = reply.body as Partial<TokenPair>;
    if (typeof pair?.accessToken !== 'string' || typeof pair.refreshToken?.id !== 'string') {
      throw new InstallerConnectionError(`${this.origin.href} answered the log-in without an access token: is it an installer?`, undefined);
    }
    this.accessToken = registerSecret(pair.accessToken);
    this.refreshId = registerSecret(pair.refreshToken.id);
    this.counts.logins++;
  }

  /** A new access token from the refresh token; a new log-in when the refresh token is gone. */
  async refresh(): Promise<void> {
    if (this.refreshId) {
      const reply = await this.send('PATCH', INSTALLER_API.refreshAccessToken, this.refreshId);
      if (reply.status === 200 && typeof reply.body === 'string') {
        this.accessToken = registerSecret(reply.body);
        this.counts.refreshes++;
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
      exp = jwtClaims(this.accessToken).exp;
    } catch {
      // An opaque token: its expiry shows as a 401, which refreshes it.
      return Infinity;
    }
    return typeof exp === 'number' ? exp - this.clock() / 1000 : Infinity;
  }

  /** An authenticated call: refreshed before expiry, retried once after a 401. */
  async call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, opts: CallOptions = {}): Promise<Reply> {
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
      if (id)
        await this.send('DELETE', INSTALLER_API.refreshToken, id, undefined, {
          retries: 0,
          ...(opts.abort ? { signal: AbortSignal.timeout(ABORT_GRACE_MS) } : {}),
        });
    } catch {
      // The token expires on its own; a failed revocation must not fail the command.
    } finally {
      this.accessToken = undefined;
      await (opts.abort ? this.transport.destroy() : this.transport.close());
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
    const timeoutMs = Math.max(this.opts.depotUpdateTimeoutMs ?? DEPOT_UPDATE_TIMEOUT_MS, this.opts.timeoutMs ?? INSTALLER_DEFAULTS.timeoutMs);
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
    if (reply.status !== 200 || !isObject(reply.body) || !Array.isArray(reply.body.elements))
      throw this.apiError(`Listing the components of ${sku} ${releaseVersion}`, reply);
    return reply.body.elements as ReleaseComponentDetail[];
  }

  /**
   * Asks for a bundle's download: 'started'; 'already-downloaded' (BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED); or 'in-progress'
   * when another client asked first (ALREADY_SCHEDULED while queued or downloading, NOT_AVAILABLE while validating),
   * the three codes the vendor's own download sample takes as nothing to do.
   */
  async startBundleDownload(id: string): Promise<'started' | 'already-downloaded' | 'in-progress'> {
    const reply = await this.call('PATCH', apiPath(INSTALLER_API.bundle, { id }), { bundleDownloadSpec: { downloadNow: true } });
    if (reply.status === 202 || reply.status === 200) return 'started';
    const code = parseErrorBody(reply.body)?.errorCode;
    if (code === INSTALLER_ERROR_CODES.bundleAlreadyDownloaded) return 'already-downloaded';
    if (code === INSTALLER_ERROR_CODES.bundleAlreadyScheduled || code === INSTALLER_ERROR_CODES.bundleNotAvailable) return 'in-progress';
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

  private send(method: string, path: string, body: unknown, token?: string, opts: CallOptions = {}): Promise<Reply> {
    return this.transport.send(method, path, { body, headers: token ? { authorization: `Bearer ${token}` } : {}, ...opts });
  }

  private connectionError(err: unknown, code: string | undefined): InstallerConnectionError {
    const where = this.origin.host;
    if (isTlsTrustError(code)) {
      return new InstallerConnectionError(
        `The installer ${where} presented a certificate this client does not trust (${code}).`,
        code,
        "Pass the installer's certificate (or its CA) with `installerCa` FILE; `insecure` skips the check.",
      );
    }
    if (code === 'ENOTFOUND') return new InstallerConnectionError(`The installer host ${this.origin.hostname} cannot be resolved.`, code);
    return new InstallerConnectionError(
      `Cannot reach the installer ${where}: ${describeNetworkFailure(code, err)}.`,
      code,
      'Check the URL and that the installer is running.',
    );
  }
}

/**
 * A JWT's claims, unverified (the installer signs them; the client reads only their expiry).
 * Read by hand rather than with jose, which costs about 90 ms of CPU at every start.
 */
function jwtClaims(token: string): Record<string, unknown> {
  const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new Error('JWT claims are not an object');
  return claims as Record<string, unknown>;
}
