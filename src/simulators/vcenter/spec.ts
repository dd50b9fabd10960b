import type { Request } from 'express';
import type { MgmtApiGeneration } from '../../constants.js';
import { isObject } from '../../vcenter/wire.js';
import { badRequest } from './http-error.js';

/** The request's spec: wrapped in `spec` on /rest, the body itself on /api. */
export function specOf(req: Request, generation: MgmtApiGeneration): Record<string, unknown> {
  if (!req.is('application/json')) throw badRequest('The request needs a JSON body with Content-Type: application/json.');
  const body: unknown = req.body;
  const spec = generation === 'rest' ? (isObject(body) ? body.spec : undefined) : body;
  if (!isObject(spec)) {
    throw badRequest(generation === 'rest' ? 'The request body must be an object with a "spec" field.' : 'The request body must be a JSON object.');
  }
  return spec;
}
