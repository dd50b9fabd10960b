import type { NextFunction, Request, Response } from 'express';
import { MGMT_API, MGMT_BASIC_CHALLENGE, MGMT_ERROR_TYPES, type MgmtApiGeneration } from '../../constants.js';
import { MGMT_MESSAGE_IDS } from './literals.js';
import { errorBody, isObject, message, type MgmtErrorType } from '../../vcenter/wire.js';
import { InvalidArgument } from './certs.js';
import { ChainExists, ChainInvalid, ChainNotFound } from './trusted-chains.js';

/** A refusal the simulated server answers in the error shape of the request's generation. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: MgmtErrorType,
    readonly id: string,
    text: string,
  ) {
    super(text);
  }
}

export const unauthenticated = (text: string) => new HttpError(401, MGMT_ERROR_TYPES.unauthenticated, MGMT_MESSAGE_IDS.authenticationRequired, text);
export const badRequest = (text: string, id: string = MGMT_MESSAGE_IDS.badRequest) => new HttpError(400, MGMT_ERROR_TYPES.invalidArgument, id, text);

/** The /rest generation's path prefix, from its paths (they all share the first segment). */
const REST_PREFIX = `/${MGMT_API.rest.session.split('/')[1]}/`;

/** The generation whose error shape a request gets, unknown paths included. */
function generationOf(req: Request): MgmtApiGeneration {
  return req.path.startsWith(REST_PREFIX) ? 'rest' : 'api';
}

/**
 * What a failure answers, on any transport: its own refusal, a 400 for a refused spec or a body
 * that is not JSON, the trusted root chains' own refusals, else a 500. `csr` says the refused spec was a CSR's.
 */
export function httpErrorOf(err: unknown, csr = false): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof InvalidArgument) return badRequest(err.message, csr ? MGMT_MESSAGE_IDS.csrInvalid : MGMT_MESSAGE_IDS.tlsInvalid);
  if (err instanceof ChainInvalid) return badRequest(err.message, MGMT_MESSAGE_IDS.chainInvalid);
  if (err instanceof ChainNotFound) return new HttpError(404, MGMT_ERROR_TYPES.notFound, MGMT_MESSAGE_IDS.chainNotFound, err.message);
  // vAPI answers AlreadyExists with 400 on /rest and /api.
  if (err instanceof ChainExists) return new HttpError(400, MGMT_ERROR_TYPES.alreadyExists, MGMT_MESSAGE_IDS.chainExists, err.message);
  if (isObject(err) && err.type === 'entity.parse.failed') return badRequest('The request body is not valid JSON.');
  return new HttpError(500, MGMT_ERROR_TYPES.error, MGMT_MESSAGE_IDS.badRequest, 'Internal error in the simulator.');
}

/** Express's error handler: every failure in the error body of its generation. */
export function answerError(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  const error = httpErrorOf(err, req.path.endsWith('-csr'));
  // Every 401 carries the Basic challenge: some clients (PowerShell's -Credential) send credentials only after one.
  const challenge = error.status === 401 ? MGMT_BASIC_CHALLENGE : undefined;
  if (challenge) res.set('WWW-Authenticate', challenge);
  res.status(error.status).json(errorBody(generationOf(req), error.type, [message(error.id, error.message)], challenge));
}
