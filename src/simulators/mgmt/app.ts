import express, { type NextFunction, type Request, type Response } from 'express';
import basicAuth from 'express-basic-auth';
import {
  MGMT_API,
  MGMT_BASIC_CHALLENGE,
  MGMT_BASIC_REALM,
  MGMT_ERROR_TYPES,
  MGMT_HEADERS,
  MGMT_SESSION_COOKIE,
  MGMT_TLS_KEY_FIELD,
  type MgmtApiGeneration,
} from '../../constants.js';
import { MGMT_MESSAGE_IDS, MGMT_SESSION_COOKIE_ATTRIBUTES } from './literals.js';
import { errorBody, isObject, message, wrapValue, type CsrSpec, type MgmtErrorType, type TlsReplaceSpec } from '../../mgmt/wire.js';
import { InvalidArgument, checkReplace, makeCsr, tlsInfo, type ServedCertificate } from './certs.js';
import { SessionStore, checkCredentials, cookieValues } from './sessions.js';

/** The simulated server's state that outlives one listening period. */
export interface MgmtState {
  hostname: string;
  users: Readonly<Record<string, string>>;
  generations: readonly MgmtApiGeneration[];
  sessions: SessionStore;
  current: ServedCertificate;
  /** The key of the last CSR, kept for the certificate that comes back signed. */
  pendingKeyPem?: string;
  trustedRoots: string[];
  /**
   * Called while a successful replace is answered (so that a client told of the success finds the
   * restart under way); `answered` settles once the response has gone out.
   */
  onReplaced(answered: Promise<void>): void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: MgmtErrorType,
    readonly id: string,
    text: string,
  ) {
    super(text);
  }
}

const unauthenticated = (text: string) => new HttpError(401, MGMT_ERROR_TYPES.unauthenticated, MGMT_MESSAGE_IDS.authenticationRequired, text);
const badRequest = (text: string, id: string = MGMT_MESSAGE_IDS.badRequest) => new HttpError(400, MGMT_ERROR_TYPES.invalidArgument, id, text);

/** The /rest generation's path prefix, from its paths (they all share the first segment). */
const REST_PREFIX = `/${MGMT_API.rest.session.split('/')[1]}/`;

/** The generation whose error shape a request gets, unknown paths included. */
function generationOf(req: Request): MgmtApiGeneration {
  return req.path.startsWith(REST_PREFIX) ? 'rest' : 'api';
}

/** The express app for both API generations, each on its own paths. */
export function mgmtApp(state: MgmtState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb', strict: false }));

  for (const generation of state.generations) {
    const paths = MGMT_API[generation];
    const ok = generation === 'rest' ? 200 : 201;
    const done = generation === 'rest' ? 200 : 204;

    // MGMT_HEADERS.useHeaderAuthn is not required: the vendor documents it as optional (it guards
    // browsers against CSRF), scripts leave it out, and govmomi's vcsim does not ask for it either.
    const basic = basicAuth({
      // Any user list, compared in constant time; an unknown user costs the same work.
      authorizer: (user: string, password: string) => checkCredentials(state.users, user, password),
      challenge: true,
      realm: MGMT_BASIC_REALM,
      unauthorizedResponse: (req: basicAuth.IBasicAuthedRequest) => {
        const text = req.auth
          ? 'Authentication required: the user name or password is not correct.'
          : 'Authentication required: send the user name and password with Basic authentication.';
        return errorBody(generation, MGMT_ERROR_TYPES.unauthenticated, [message(MGMT_MESSAGE_IDS.authenticationRequired, text)], MGMT_BASIC_CHALLENGE);
      },
    });
    app.post(paths.session, basic, (_req, res) => {
      const id = state.sessions.create();
      // The same id as a cookie, for clients that keep a cookie jar instead of setting the header.
      res.append('Set-Cookie', `${MGMT_SESSION_COOKIE}=${id}; ${MGMT_SESSION_COOKIE_ATTRIBUTES}`);
      res.status(ok).json(wrapValue(generation, id));
    });

    app.delete(paths.session, (req, res) => {
      state.sessions.delete(requireSession(req));
      res.status(done).end();
    });

    app.post(paths.tlsCsr, async (req, res) => {
      requireSession(req);
      const spec = specOf(req, generation) as CsrSpec;
      const { csrPem, keyPem } = await makeCsr(spec, state.hostname);
      state.pendingKeyPem = keyPem;
      res.status(ok).json(wrapValue(generation, { csr: csrPem }));
    });

    app.get(paths.tls, (req, res) => {
      requireSession(req);
      res.status(200).json(wrapValue(generation, tlsInfo(state.current.certPem)));
    });

    app.put(paths.tls, (req, res) => {
      requireSession(req);
      const spec = specOf(req, generation);
      const request: TlsReplaceSpec = {
        cert: spec.cert as string,
        root_cert: spec.root_cert as string | undefined,
        [MGMT_TLS_KEY_FIELD]: spec[MGMT_TLS_KEY_FIELD] as string | undefined,
      };
      const next = checkReplace(request, state);
      state.current = { certPem: next.certPem, keyPem: next.keyPem, chainPems: next.chainPems };
      state.pendingKeyPem = undefined;
      // Published as trusted, intermediates too, so that a later replacement without root_cert can chain through them.
      for (const pem of next.rootPems) if (!state.trustedRoots.includes(pem)) state.trustedRoots.push(pem);
      // The restart must not cut this response off: close the connection after it, then restart.
      res.set('Connection', 'close');
      state.onReplaced(new Promise<void>((resolve) => res.on('close', () => resolve())));
      res.status(done).end();
    });
  }

  app.use((req) => {
    throw new HttpError(404, MGMT_ERROR_TYPES.notFound, MGMT_MESSAGE_IDS.notFound, `No operation at ${req.method} ${req.path}.`);
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let error: HttpError;
    if (err instanceof HttpError) error = err;
    else if (err instanceof InvalidArgument)
      error = badRequest(err.message, req.path.endsWith('-csr') ? MGMT_MESSAGE_IDS.csrInvalid : MGMT_MESSAGE_IDS.tlsInvalid);
    else if (isObject(err) && err.type === 'entity.parse.failed') error = badRequest('The request body is not valid JSON.');
    else error = new HttpError(500, MGMT_ERROR_TYPES.error, MGMT_MESSAGE_IDS.badRequest, 'Internal error in the simulator.');
    // Every 401 carries the Basic challenge: some clients (PowerShell's -Credential) send credentials only after one.
    const challenge = error.status === 401 ? MGMT_BASIC_CHALLENGE : undefined;
    if (challenge) res.set('WWW-Authenticate', challenge);
    res.status(error.status).json(errorBody(generationOf(req), error.type, [message(error.id, error.message)], challenge));
  });

  /**
   * The live session a call names: the header when it is sent (it wins, as in govmomi's vcsim),
   * otherwise the session cookie (a jar may hold several; any live one will do).
   */
  function requireSession(req: Request): string {
    const header = req.get(MGMT_HEADERS.sessionId);
    const candidates = header ? [header] : cookieValues(req.get('cookie'), MGMT_SESSION_COOKIE);
    const id = candidates.find((c) => state.sessions.touch(c));
    if (id === undefined) {
      throw unauthenticated(candidates.length > 0 ? 'Authentication required: the session has expired or is not valid.' : 'Authentication required.');
    }
    return id;
  }

  return app;
}

/** The request's spec: wrapped in `spec` on /rest, the body itself on /api. */
function specOf(req: Request, generation: MgmtApiGeneration): Record<string, unknown> {
  if (!req.is('application/json')) throw badRequest('The request needs a JSON body with Content-Type: application/json.');
  const body: unknown = req.body;
  const spec = generation === 'rest' ? (isObject(body) ? body.spec : undefined) : body;
  if (!isObject(spec)) {
    throw badRequest(generation === 'rest' ? 'The request body must be an object with a "spec" field.' : 'The request body must be a JSON object.');
  }
  return spec;
}
