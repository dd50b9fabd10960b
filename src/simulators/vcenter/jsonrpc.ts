import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { MGMT_ERROR_TYPES, MGMT_HEADERS, MGMT_JSONRPC } from '../../constants.js';
import { isObject } from '../../vcenter/wire.js';
import type { MgmtState } from './state.js';
import { HttpError, badRequest, httpErrorOf } from './http-error.js';
import { operation, type Caller } from './jsonrpc-operations.js';
import { BadValue, errorValue, plain, response } from './jsonrpc-values.js';
import { MGMT_MESSAGE_IDS } from './literals.js';
import { restartAfter } from './tls-routes.js';

const { codes, schemes } = MGMT_JSONRPC;

/** The caller of the execution context: the session scheme's id, or the user and password scheme's credentials; else the session header. */
function callerOf(ctx: unknown, req: Request): Caller {
  const security = isObject(ctx) && isObject(ctx.securityCtx) ? ctx.securityCtx : {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (security.schemeId === schemes.userPass) return { user: text(security.userName), password: text(security.password) };
  if (security.schemeId === schemes.sessionId) return { sessionId: text(security.sessionId) };
  return { sessionId: req.get(MGMT_HEADERS.sessionId) };
}

/** A failure of the envelope: HTTP 200 with the JSON-RPC error, as the runtime's server answers it. */
function envelopeError(res: Response, id: unknown, code: number, message: string): void {
  res.status(200).json(response(id, { code, message }));
}

/** One `invoke`: the operation run with its input and caller, its output or its error value as the method result. */
async function invoke(state: MgmtState, req: Request, res: Response): Promise<void> {
  const body: unknown = req.body;
  if (!isObject(body) || body.jsonrpc !== MGMT_JSONRPC.version || typeof body.method !== 'string') {
    return envelopeError(res, null, codes.invalidRequest, 'Invalid Request.');
  }
  const id = body.id ?? null;
  if (body.method !== MGMT_JSONRPC.method) return envelopeError(res, id, codes.methodNotFound, 'Method not found.');
  const params = body.params;
  if (!isObject(params)) return envelopeError(res, id, codes.invalidParams, 'Invalid params.');
  let input: unknown;
  try {
    input = plain(params.input ?? null) ?? {};
  } catch (err) {
    if (err instanceof BadValue) return envelopeError(res, id, codes.invalidParams, `Invalid params: ${err.message}`);
    throw err;
  }
  const run = operation(params.serviceId, params.operationId);
  try {
    if (!run) {
      throw new HttpError(
        404,
        MGMT_ERROR_TYPES.operationNotFound,
        MGMT_MESSAGE_IDS.operationNotFound,
        `No operation ${String(params.operationId)} in service ${String(params.serviceId)}.`,
      );
    }
    if (!isObject(input)) throw new BadValue('The operation input must be a structure.');
    const outcome = await run(state, input, callerOf(params.ctx, req));
    if (outcome.restart) restartAfter(state, res);
    res.status(200).json(response(id, { result: { output: outcome.output } }));
  } catch (err) {
    const refusal = err instanceof BadValue ? badRequest(err.message) : httpErrorOf(err, params.serviceId === MGMT_JSONRPC.services.tlsCsr);
    res.status(200).json(response(id, { result: { error: errorValue(refusal) } }));
  }
}

/**
 * vAPI JSON-RPC on `POST /api`, the transport of the vSphere Automation SDK for Python, for the
 * operations the other routes serve; a body that is not JSON is the envelope's parse error.
 */
export function registerJsonRpc(app: express.Express, state: MgmtState): void {
  app.post(MGMT_JSONRPC.path, (req, res, next) => {
    invoke(state, req, res).catch(next);
  });
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (req.path !== MGMT_JSONRPC.path || req.method !== 'POST') return next(err);
    if (isObject(err) && err.type === 'entity.parse.failed') return envelopeError(res, null, codes.parseError, 'Parse error.');
    envelopeError(res, null, codes.internalError, 'Internal error.');
  });
}
