import { MGMT_BASIC_CHALLENGE, MGMT_ERROR_TYPES, MGMT_JSONRPC, MGMT_REST_ERROR_PREFIX } from '../../constants.js';
import { isObject } from '../../vcenter/wire.js';
import type { HttpError } from './http-error.js';

/**
 * vAPI values as JSON-RPC carries them (the runtime's VAPIJsonEncoder and JsonRpcDictToVapi):
 * primitives and lists bare, the other kinds in an object with one key naming the kind.
 */
const T = MGMT_JSONRPC.types;

export const structure = (name: string, fields: Record<string, unknown>) => ({ [T.structure]: { [name]: fields } });
export const optional = (value: unknown) => ({ [T.optional]: value ?? null });
export const secret = (value: string) => ({ [T.secret]: value });

/** A value the envelope does not decode (an object with other than one kind, a kind it does not know). */
export class BadValue extends Error {}

/**
 * The plain JSON of a typed value: a structure's fields, an optional's value (undefined when
 * unset), a secret's text; what the /rest and /api routes read, so that both transports share
 * their checks.
 */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (!isObject(value)) return value;
  const entries = Object.entries(value);
  if (entries.length !== 1) throw new BadValue('A typed value has exactly one key naming its kind.');
  const [kind, inner] = entries[0]!;
  switch (kind) {
    case T.optional:
      return inner === null ? undefined : plain(inner);
    case T.secret:
      return inner;
    case T.structure:
    case T.error: {
      const named = isObject(inner) ? Object.values(inner) : [];
      if (named.length !== 1 || !isObject(named[0])) throw new BadValue(`A ${kind} value names one structure with its fields.`);
      return Object.fromEntries(Object.entries(named[0]).map(([k, v]) => [k, plain(v)]));
    }
    default:
      throw new BadValue(`Unknown value kind ${kind}.`);
  }
}

/**
 * The error value of a refusal: the std error structure of its type with the fields its binding
 * has (`messages`, `data`, `error_type`, and `challenge` for UNAUTHENTICATED), each message a
 * LocalizableMessage with its optional `params` and `localized` unset.
 */
export function errorValue(error: HttpError): unknown {
  const message = structure(MGMT_JSONRPC.structures.message, {
    id: error.id,
    default_message: error.message,
    args: [],
    params: optional(null),
    localized: optional(null),
  });
  const fields: Record<string, unknown> = { messages: [message], data: optional(null), error_type: optional(error.type) };
  if (error.type === MGMT_ERROR_TYPES.unauthenticated) fields.challenge = optional(MGMT_BASIC_CHALLENGE);
  return { [T.error]: { [`${MGMT_REST_ERROR_PREFIX}${error.type.toLowerCase()}`]: fields } };
}

/** A JSON-RPC response: the method's result, or a failure of the envelope itself (its id then null for parse errors and invalid requests). */
export function response(id: unknown, outcome: { result: unknown } | { code: number; message: string }): unknown {
  if ('result' in outcome) return { jsonrpc: MGMT_JSONRPC.version, id, result: outcome.result };
  const { parseError, invalidRequest } = MGMT_JSONRPC.codes;
  const nullId = outcome.code === parseError || outcome.code === invalidRequest;
  return { jsonrpc: MGMT_JSONRPC.version, id: nullId ? null : id, error: { code: outcome.code, message: outcome.message } };
}
