import { createRequire } from 'node:module';
import type * as Undici from 'undici';

// undici's HTTP/1.1 core alone: its agent, its request call, its TLS connector and its errors, the
// very modules its index exports (test/util/undici-core.test.ts holds them to be). The index also
// loads fetch, WebSocket, EventSource, the mocks, the caches and the interceptors, 110 files that
// cost a command such as `installer status` about 0.07 s of CPU at every start on Node 20; these
// parts are 25. Each a `createRequire(import.meta.url)(...)` of its own, which both bundles (the
// CLI's and the single executable's) follow into their code (scripts/build/relative-requires.ts).

export const Agent = createRequire(import.meta.url)('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export type Agent = Undici.Agent;
export const buildConnector = createRequire(import.meta.url)('undici/lib/core/connect.js') as typeof Undici.buildConnector;
export const errors = createRequire(import.meta.url)('undici/lib/core/errors.js') as typeof Undici.errors;

type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Undici.Dispatcher };

/** undici's request method of a dispatcher, which its index puts on every dispatcher's prototype. */
const dispatcherRequest = createRequire(import.meta.url)('undici/lib/api/api-request.js') as (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>;

/** undici's `request(url, options)` with a dispatcher, as its index makes it: the URL split into origin and path. */
export function request(url: string | URL, { dispatcher, ...options }: RequestOptions): Promise<Undici.Dispatcher.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  return dispatcherRequest.call(dispatcher, { ...options, origin, path: `${pathname}${search}` });
}
