import { MGMT_JSONRPC } from '../../constants.js';
import { isObject, type CsrSpec } from '../../vcenter/wire.js';
import type { MgmtState } from './state.js';
import { makeCsr, tlsInfo } from './certs.js';
import { certChain, createChain } from './chain-routes.js';
import { badRequest, unauthenticated } from './http-error.js';
import { secret, structure } from './jsonrpc-values.js';
import { checkCredentials } from './sessions.js';
import { replace } from './tls-routes.js';

/** Who a call says it is: its security context read (a session id, or a user and password to log in with). */
export interface Caller {
  sessionId?: string;
  user?: string;
  password?: string;
}

/** An operation's output value; `restart` when the server restarts once it is answered. */
export interface Outcome {
  output: unknown;
  restart?: boolean;
}

type Operation = (state: MgmtState, input: Record<string, unknown>, caller: Caller) => Promise<Outcome> | Outcome;

const S = MGMT_JSONRPC.services;
const N = MGMT_JSONRPC.structures;

/** The live session a call names, or the 401 of the other transports. */
function session(state: MgmtState, caller: Caller): string {
  if (!caller.sessionId || !state.sessions.touch(caller.sessionId)) {
    throw unauthenticated(caller.sessionId ? 'Authentication required: the session has expired or is not valid.' : 'Authentication required.');
  }
  return caller.sessionId;
}

function spec(input: Record<string, unknown>): Record<string, unknown> {
  if (!isObject(input.spec)) throw badRequest('The operation input needs a spec structure.');
  return input.spec;
}

function chainId(input: Record<string, unknown>): string {
  if (typeof input.chain !== 'string') throw badRequest('The operation input needs the chain identifier.');
  return input.chain;
}

/** The simulated services' operations, by service and operation id, written from the bindings' stubs. */
const OPERATIONS: Record<string, Record<string, Operation>> = {
  [S.session]: {
    create: (state, _input, caller) => {
      if (caller.user === undefined || caller.password === undefined) throw unauthenticated('Authentication required: log in with a user name and password.');
      if (!checkCredentials(state.users, caller.user, caller.password)) {
        throw unauthenticated('Authentication required: the user name or password is not correct.');
      }
      return { output: secret(state.sessions.create()) };
    },
    delete: (state, _input, caller) => {
      state.sessions.delete(session(state, caller));
      return { output: null };
    },
  },
  [S.tls]: {
    get: (state, _input, caller) => {
      session(state, caller);
      const { is_CA, ...info } = tlsInfo(state.current.certPem);
      // Every field of the binding's Info is required: those the other transports leave out are given here.
      return { output: structure(N.tlsInfo, { ...info, is_CA, path_length_constraint: -1, authority_information_access_uri: [] }) };
    },
    set: (state, input, caller) => {
      session(state, caller);
      replace(state, spec(input));
      return { output: null, restart: true };
    },
  },
  [S.tlsCsr]: {
    create: async (state, input, caller) => {
      session(state, caller);
      const { csrPem, keyPem } = await makeCsr(spec(input) as CsrSpec, state.hostname);
      state.pendingKeyPem = keyPem;
      return { output: structure(N.tlsCsrInfo, { csr: csrPem }) };
    },
  },
  [S.trustedRootChains]: {
    list: (state, _input, caller) => {
      session(state, caller);
      return { output: state.chains.ids().map((chain) => structure(N.chainSummary, { chain })) };
    },
    create: (state, input, caller) => {
      session(state, caller);
      return { output: createChain(state.chains, spec(input)) };
    },
    get: (state, input, caller) => {
      session(state, caller);
      return { output: structure(N.chainInfo, { cert_chain: structure(N.certChain, certChain(state.chains.get(chainId(input)))) }) };
    },
    delete: (state, input, caller) => {
      session(state, caller);
      state.chains.delete(chainId(input));
      return { output: null };
    },
  },
};

/** The operation a call names; undefined when the server has none by that name. */
export function operation(serviceId: unknown, operationId: unknown): Operation | undefined {
  if (typeof serviceId !== 'string' || typeof operationId !== 'string') return undefined;
  return Object.hasOwn(OPERATIONS, serviceId) && Object.hasOwn(OPERATIONS[serviceId]!, operationId) ? OPERATIONS[serviceId]![operationId] : undefined;
}
