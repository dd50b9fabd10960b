import { MGMT_ERROR_TYPES, MGMT_REST_ERROR_PREFIX, MGMT_TLS_KEY_FIELD, type MgmtApiGeneration } from '../constants.js';
import { isObject } from '../util/json.js';

export { isObject };

/**
 * The management server's JSON shapes, shared by the client and the simulator
 * so that both speak exactly the same wire format: /rest wraps
 * request bodies in `spec` and responses in `value`; /api uses neither.
 */

export type MgmtErrorType = (typeof MGMT_ERROR_TYPES)[keyof typeof MGMT_ERROR_TYPES];

export interface MgmtMessage {
  id: string;
  default_message: string;
  args: string[];
}

/** The CSR specification fields of the vendor's API. */
export interface CsrSpec {
  common_name?: string;
  country?: string;
  email_address?: string;
  key_size?: number;
  locality?: string;
  organization?: string;
  organization_unit?: string;
  state_or_province?: string;
  subject_alt_name?: string[];
}

/** The replace request: `key` only for certificates made outside the server. */
export interface TlsReplaceSpec {
  cert: string;
  [MGMT_TLS_KEY_FIELD]?: string;
  root_cert?: string;
}

/** What `GET .../tls` reports about the served certificate. */
export interface TlsInfo {
  version: number;
  serial_number: string;
  signature_algorithm: string;
  subject_dn: string;
  issuer_dn: string;
  valid_from: string;
  valid_to: string;
  /** SHA-1, colon-separated upper-case hex, as the real server shows it. */
  thumbprint: string;
  is_CA: boolean;
  key_usage: string[];
  extended_key_usage: string[];
  subject_alternative_name: string[];
  cert: string;
}

/** A request body in the generation's shape. */
export function wrapSpec<T>(generation: MgmtApiGeneration, spec: T): unknown {
  return generation === 'rest' ? { spec } : spec;
}

/** A response body in the generation's shape. */
export function wrapValue<T>(generation: MgmtApiGeneration, value: T): unknown {
  return generation === 'rest' ? { value } : value;
}

/** Takes the value out of a response body; undefined when the shape is wrong. */
export function unwrapValue(generation: MgmtApiGeneration, body: unknown): unknown {
  if (generation === 'api') return body;
  return isObject(body) && 'value' in body ? body.value : undefined;
}

/** An error body; `challenge` is the authentication challenge an UNAUTHENTICATED error carries (vSphere 7.0 and later). */
export function errorBody(generation: MgmtApiGeneration, type: MgmtErrorType, messages: MgmtMessage[], challenge?: string): unknown {
  const extra = challenge === undefined ? {} : { challenge };
  if (generation === 'rest') return { type: `${MGMT_REST_ERROR_PREFIX}${type.toLowerCase()}`, value: { messages, ...extra } };
  return { error_type: type, messages, ...extra };
}

export function message(id: string, text: string, args: string[] = []): MgmtMessage {
  return { id, default_message: text, args };
}

/**
 * Reads an error body of either generation (a client must tolerate both):
 * the error type in upper case (INVALID_ARGUMENT) and the message texts.
 */
export function parseErrorBody(body: unknown): { type?: string; messages: string[] } {
  if (!isObject(body)) return { messages: typeof body === 'string' && body.trim() !== '' ? [body.trim()] : [] };
  let type: string | undefined;
  let list: unknown;
  if (typeof body.error_type === 'string') {
    type = body.error_type;
    list = body.messages;
  } else if (typeof body.type === 'string') {
    type = body.type.startsWith(MGMT_REST_ERROR_PREFIX) ? body.type.slice(MGMT_REST_ERROR_PREFIX.length).toUpperCase() : body.type;
    list = isObject(body.value) ? body.value.messages : undefined;
  }
  const messages = Array.isArray(list)
    ? list.map((m) => (isObject(m) && typeof m.default_message === 'string' ? m.default_message : undefined)).filter((m): m is string => !!m)
    : [];
  return { ...(type !== undefined ? { type } : {}), messages };
}
