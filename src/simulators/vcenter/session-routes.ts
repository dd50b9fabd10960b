import type express from 'express';
import type { Request } from 'express';
import basicAuth from 'express-basic-auth';
import {
  MGMT_API,
  MGMT_BASIC_CHALLENGE,
  MGMT_BASIC_REALM,
  MGMT_ERROR_TYPES,
  MGMT_HEADERS,
  MGMT_SESSION_COOKIE,
  type MgmtApiGeneration,
} from '../../constants.js';
import { MGMT_MESSAGE_IDS, MGMT_SESSION_COOKIE_ATTRIBUTES } from './literals.js';
import { errorBody, message, wrapValue } from '../../vcenter/wire.js';
import { unauthenticated } from './http-error.js';
import { checkCredentials, cookieValues, type SessionStore } from './sessions.js';

/** The session id a call names, checked live; throws the 401 otherwise. */
export type RequireSession = (req: Request) => string;

/**
 * The live session a call names: the header when it is sent (it wins, as in govmomi's vcsim),
 * otherwise the session cookie (a jar may hold several; any live one will do).
 */
export function sessionChecker(sessions: SessionStore): RequireSession {
  return (req) => {
    const header = req.get(MGMT_HEADERS.sessionId);
    const candidates = header ? [header] : cookieValues(req.get('cookie'), MGMT_SESSION_COOKIE);
    const id = candidates.find((c) => sessions.touch(c));
    if (id === undefined) {
      throw unauthenticated(candidates.length > 0 ? 'Authentication required: the session has expired or is not valid.' : 'Authentication required.');
    }
    return id;
  };
}

/** Log-in with Basic credentials and log-out, in one generation's paths and shapes. */
export function registerSessionRoutes(
  app: express.Express,
  generation: MgmtApiGeneration,
  users: Readonly<Record<string, string>>,
  sessions: SessionStore,
  requireSession: RequireSession,
): void {
  const paths = MGMT_API[generation];
  // MGMT_HEADERS.useHeaderAuthn is not required: the vendor documents it as optional (it guards
  // browsers against CSRF), scripts leave it out, and govmomi's vcsim does not ask for it either.
  const basic = basicAuth({
    // Any user list, compared in constant time; an unknown user costs the same work.
    authorizer: (user: string, password: string) => checkCredentials(users, user, password),
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
    const id = sessions.create();
    // The same id as a cookie, for clients that keep a cookie jar instead of setting the header.
    res.append('Set-Cookie', `${MGMT_SESSION_COOKIE}=${id}; ${MGMT_SESSION_COOKIE_ATTRIBUTES}`);
    res.status(generation === 'rest' ? 200 : 201).json(wrapValue(generation, id));
  });

  app.delete(paths.session, (req, res) => {
    sessions.delete(requireSession(req));
    res.status(generation === 'rest' ? 200 : 204).end();
  });
}
