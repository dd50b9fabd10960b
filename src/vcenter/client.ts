import { MGMT_API, MGMT_HEADERS, MGMT_USE_HEADER_AUTHN_VALUE, type MgmtApiGeneration } from '../constants.js';
import { DepotkitError, EXIT } from '../util/errors.js';
import { JsonTransport, basicAuthorization, describeNetworkFailure, networkErrorCode, type Reply } from '../net/index.js';
import { TLS_TRUST_ERROR_CODES } from '../util/tls-errors.js';
import { registerSecret } from '../util/scrub.js';
import { parseHttpsOrigin } from '../util/url.js';
import { isObject, parseErrorBody, unwrapValue, wrapSpec, type CsrSpec, type TlsInfo, type TlsReplaceSpec } from './wire.js';

import type { ApiChoice } from './choices.js';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export { API_CHOICES, type ApiChoice } from './choices.js';

/** Which certificates the client trusts for the server's current certificate. */
export interface MgmtTrust {
  /** CA (or self-signed server) certificates, PEM; the system store when absent. */
  caPems?: string[];
  /** Skip certificate validation (allowed for a server not trusted yet). */
  insecure?: boolean;
}

export interface MgmtClientOptions {
  /** `https://host[:port]`; a path is ignored. */
  server: string;
  user: string;
  password: string;
  /** `auto` (the default) uses the newer /api generation when the server has it. */
  api?: ApiChoice;
  trust?: MgmtTrust;
  /** Per-request timeout; 120 s by default (a 4096-bit CSR takes the server a while). */
  timeoutMs?: number;
  /** Log in again once when a session has expired (true by default). */
  reauthenticate?: boolean;
}

/** The server refused a call: its HTTP status, error type and messages. */
export class MgmtApiError extends DepotkitError {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly type: string | undefined,
    readonly messages: string[],
  ) {
    const detail = messages.length > 0 ? `: ${messages.join(' ')}` : '.';
    super(`${operation} failed: the server answered ${status}${type ? ` ${type}` : ''}${detail}`, EXIT.problems);
    this.name = 'MgmtApiError';
  }
}

/** The server's origin from a URL; only https is accepted, since the API needs it. */
export function parseServerUrl(server: string): URL {
  return parseHttpsOrigin(server, 'the management server');
}

/** A connection as the library's operations take it: the server, the user, and trust for the server's certificate. */
export interface MgmtConnection {
  server: string;
  user: string;
  password: string;
  api?: ApiChoice;
  /** Trust for the server's current certificate. */
  serverCaPems?: string[];
  insecure?: boolean;
  requestTimeoutMs?: number;
}

/** Opens a session from a connection's options. */
export function connectMgmt(opts: MgmtConnection): Promise<MgmtClient> {
  return MgmtClient.connect({
    server: opts.server,
    user: opts.user,
    password: opts.password,
    api: opts.api,
    trust: { caPems: opts.serverCaPems, insecure: opts.insecure },
    timeoutMs: opts.requestTimeoutMs,
  });
}

/**
 * A client of the management server's certificate API, either generation.
 * The password stays in memory only, to log in again after a session expires
 * or the server restarts; it is never part of an error or a report.
 */
export class MgmtClient {
  private sessionId?: string;
  /** How many sessions this client opened. */
  logins = 0;

  private constructor(
    readonly origin: URL,
    public generation: MgmtApiGeneration,
    private readonly transport: JsonTransport,
    private readonly credentials: { user: string; password: string },
    private readonly reauthenticate: boolean,
  ) {}

  /** Opens a session; with `api: auto`, tries the newer generation first. */
  static async connect(opts: MgmtClientOptions): Promise<MgmtClient> {
    const origin = parseServerUrl(opts.server);
    // No retries: a replacement must not be sent twice, and the restart is waited for elsewhere.
    const transport = new JsonTransport({
      origin,
      trust: opts.trust,
      timeoutMs: opts.timeoutMs ?? 120_000,
      connectionError: (err, code) => connectionError(origin, err, code),
      serverName: 'the management server',
    });
    const choice = opts.api ?? 'auto';
    const client = new MgmtClient(
      origin,
      choice === 'auto' ? 'api' : choice,
      transport,
      { user: opts.user, password: registerSecret(opts.password) },
      opts.reauthenticate ?? true,
    );
    try {
      if (choice === 'auto' && !(await client.login(true))) {
        client.generation = 'rest';
        await client.login();
      } else if (choice !== 'auto') {
        await client.login();
      }
    } catch (err) {
      await transport.close();
      throw err;
    }
    return client;
  }

  /**
   * Creates a session. With `probe`, a 404 means the generation is absent and
   * returns false instead of failing.
   */
  async login(probe = false): Promise<boolean> {
    const headers: Record<string, string> = { authorization: basicAuthorization(this.credentials.user, this.credentials.password) };
    if (this.generation === 'rest') headers[MGMT_HEADERS.useHeaderAuthn] = MGMT_USE_HEADER_AUTHN_VALUE;
    const reply = await this.send('POST', MGMT_API[this.generation].session, headers);
    if (probe && (reply.status === 404 || reply.status === 405)) return false;
    if (reply.status === 401) {
      throw new DepotkitError(
        `The server refused the user name or password of ${this.credentials.user}.`,
        EXIT.problems,
        'Check `user` and the password file.',
      );
    }
    check('Opening a session', reply);
    const id = unwrapValue(this.generation, reply.body);
    if (typeof id !== 'string' || id === '') throw new DepotkitError('Opening a session failed: the server answered without a session id.', EXIT.problems);
    this.sessionId = registerSecret(id);
    this.logins++;
    return true;
  }

  /** Asks the server for a CSR; it keeps the private key. Returns the PEM. */
  async createCsr(spec: CsrSpec): Promise<string> {
    const reply = await this.call('Requesting a CSR', 'POST', MGMT_API[this.generation].tlsCsr, wrapSpec(this.generation, spec));
    const value = unwrapValue(this.generation, reply.body);
    const csr = isObject(value) ? value.csr : undefined;
    if (typeof csr !== 'string' || !csr.includes('CERTIFICATE REQUEST')) {
      throw new DepotkitError('Requesting a CSR failed: the server answered without a PEM certificate request.', EXIT.problems);
    }
    return csr;
  }

  /** Installs a certificate; on success the server restarts its services. */
  async replaceTls(spec: TlsReplaceSpec): Promise<void> {
    await this.call('Replacing the certificate', 'PUT', MGMT_API[this.generation].tls, wrapSpec(this.generation, spec));
  }

  /** The details of the certificate the server serves. */
  async getTls(): Promise<TlsInfo> {
    const reply = await this.call('Reading the certificate', 'GET', MGMT_API[this.generation].tls);
    const value = unwrapValue(this.generation, reply.body);
    if (!isObject(value) || typeof value.cert !== 'string') {
      throw new DepotkitError('Reading the certificate failed: the server answered without the certificate.', EXIT.problems);
    }
    return value as unknown as TlsInfo;
  }

  /** The ids of the server's trusted root chains. */
  async listChains(): Promise<string[]> {
    const reply = await this.call('Listing the trusted root chains', 'GET', MGMT_API[this.generation].trustedRootChains);
    const value = unwrapValue(this.generation, reply.body);
    if (!Array.isArray(value)) throw new DepotkitError('Listing the trusted root chains failed: the server answered without a list.', EXIT.problems);
    return value.map((s) => (isObject(s) && typeof s.chain === 'string' ? s.chain : '')).filter((id) => id !== '');
  }

  /** The PEM certificates of one trusted root chain. */
  async getChain(chain: string): Promise<string[]> {
    const reply = await this.call(`Reading the trusted root chain ${chain}`, 'GET', this.chainPath(chain));
    const value = unwrapValue(this.generation, reply.body);
    const list = isObject(value) && isObject(value.cert_chain) ? value.cert_chain.cert_chain : undefined;
    if (!Array.isArray(list) || list.some((p) => typeof p !== 'string')) {
      throw new DepotkitError(`Reading the trusted root chain ${chain} failed: the server answered without its certificates.`, EXIT.problems);
    }
    return list as string[];
  }

  /** Adds a trusted root chain (the CA, then its issuers); returns the id the server gave it. */
  async createChain(pems: string[]): Promise<string> {
    const spec = { cert_chain: { cert_chain: pems } };
    const reply = await this.call('Adding a trusted root chain', 'POST', MGMT_API[this.generation].trustedRootChains, wrapSpec(this.generation, spec));
    const id = unwrapValue(this.generation, reply.body);
    if (typeof id !== 'string' || id === '') throw new DepotkitError('Adding a trusted root chain failed: the server answered without its id.', EXIT.problems);
    return id;
  }

  async deleteChain(chain: string): Promise<void> {
    await this.call(`Removing the trusted root chain ${chain}`, 'DELETE', this.chainPath(chain));
  }

  /** A call of an API only the /api generation has (vLCM's depots, the appliance's version): the answer's body. */
  async apiCall(operation: string, method: HttpMethod, path: string, body?: unknown): Promise<unknown> {
    if (this.generation !== 'api') {
      throw new DepotkitError(
        `${operation} needs the /api generation of the API (vSphere 7.0 Update 2 and later); ${this.origin.host} answers on /rest only.`,
        EXIT.problems,
      );
    }
    return (await this.call(operation, method, path, body)).body;
  }

  private chainPath(chain: string): string {
    return `${MGMT_API[this.generation].trustedRootChains}/${encodeURIComponent(chain)}`;
  }

  /** Ends the session (best effort: a restarted server has dropped it already) and closes connections. */
  async close(): Promise<void> {
    if (this.sessionId) {
      try {
        await this.send('DELETE', MGMT_API[this.generation].session, { [MGMT_HEADERS.sessionId]: this.sessionId });
      } catch {
        // The session dies with its idle timeout anyway.
      }
      this.sessionId = undefined;
    }
    await this.transport.close();
  }

  /** A call with the session; after a 401 it logs in once more and retries, when allowed. */
  private async call(operation: string, method: HttpMethod, path: string, body?: unknown): Promise<Reply> {
    for (let attempt = 0; ; attempt++) {
      if (!this.sessionId) await this.login();
      const headers: Record<string, string> = { [MGMT_HEADERS.sessionId]: this.sessionId! };
      const reply = await this.send(method, path, headers, body);
      if (reply.status === 401 && attempt === 0 && this.reauthenticate) {
        this.sessionId = undefined;
        continue;
      }
      if (reply.status === 401) {
        const { messages } = parseErrorBody(reply.body);
        throw new MgmtApiError(operation, 401, 'UNAUTHENTICATED', messages.length > 0 ? messages : ['the session has expired or is not valid.']);
      }
      check(operation, reply);
      return reply;
    }
  }

  private send(method: HttpMethod, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
    return this.transport.send(method, path, { headers, body });
  }
}

function check(operation: string, reply: Reply): void {
  if (reply.status >= 200 && reply.status < 300) return;
  const { type, messages } = parseErrorBody(reply.body);
  throw new MgmtApiError(operation, reply.status, type, messages);
}

/** One sentence for a network or TLS failure, with what to do about it. */
export function connectionError(origin: URL, err: unknown, code = networkErrorCode(err)): DepotkitError {
  if (code && TLS_TRUST_ERROR_CODES.has(code)) {
    return new DepotkitError(
      `${origin.host} presents a certificate this client does not trust (${code}).`,
      EXIT.problems,
      'Pass `serverCaPems` FILE with the certificate of its CA (or the server certificate itself), or `insecure` for a server not trusted yet.',
    );
  }
  return new DepotkitError(`Cannot reach ${origin.host}: ${describeNetworkFailure(code, err)}.`, EXIT.problems);
}
