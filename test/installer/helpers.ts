import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { Agent, request } from 'undici';
import { expect } from 'vitest';
import { inCommandLineWords } from '../../src/cli/wording.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, selfSignedServerCertificate, type CaMaterial } from '../../src/cert/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { startInstallerSimulator, type InstallerSimulator, type InstallerSimulatorOptions } from '../../src/simulators/installer/index.js';
import { InstallerClient } from '../../src/installer/client.js';
import { lastingKeys } from '../helpers/key-pool.js';

export const USER = 'admin@local';
export const PASSWORD = 'Install3r-Secret!';
export const DEPOT_USER = 'depotuser';
export const DEPOT_PASSWORD = 'Dep0t-Pa55word';

let simTlsPromise: Promise<{ certPem: string; keyPem: string }> | undefined;
/**
 * One self-signed certificate for 127.0.0.1 for the simulators the tests start (as each would make its own), kept
 * while the worker lives: its key, one no other certificate gets (lastingKeys), is most of a simulator's start.
 */
export function simTls(): Promise<{ certPem: string; keyPem: string }> {
  simTlsPromise ??= lastingKeys(() => selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729));
  return simTlsPromise;
}

/** A simulated installer for the tests' user; on 127.0.0.1 under no other name, with the file's one certificate. */
export async function startSim(opts: InstallerSimulatorOptions = {}): Promise<InstallerSimulator> {
  const shared = opts.tls === undefined && opts.hostname === undefined && (opts.host ?? '127.0.0.1') === '127.0.0.1';
  return startInstallerSimulator({ users: { [USER]: PASSWORD }, ...opts, ...(shared ? { tls: await simTls() } : {}) });
}

/**
 * `dir`/fleet.yaml: the consumers at `urls` (by name), each logged in to as USER with the password
 * in FLEET_PASSWORD and trusted by a bundle of `caPems`. Returns the inventory's path.
 */
export async function writeFleetInventory(dir: string, caPems: string[], urls: Record<string, string>): Promise<string> {
  const bundle = join(dir, 'fleet-ca.pem');
  await writeFile(bundle, caPems.join(''));
  const inventory = join(dir, 'fleet.yaml');
  const entries = Object.entries(urls).map(([name, url]) => `  - { name: ${name}, url: "${url}" }`);
  await writeFile(
    inventory,
    ['defaults:', `  user: ${USER}`, '  passwordEnv: FLEET_PASSWORD', `  installerCa: ${bundle}`, 'installers:', ...entries].join('\n'),
  );
  return inventory;
}

/** A library sentence as the command line shows it: its options as the flags, its operations as the commands. */
export function asCommandLine(text: string | undefined): string {
  return inCommandLineWords(text ?? '');
}

// ------------------------------------------------------------ OpenAPI checks

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: object }> };
        responses: Record<string, { content?: Record<string, { schema: object }>; 'x-vmw-compiler-skip'?: boolean }>;
      }
    >
  >;
}

/** The published structure, 9.1.0.0 (a superset of the operations) first, then 9.0.2.0. */
const specs = ['installer-openapi-9.1-subset.json', 'installer-openapi-subset.json'].map((file, i) => {
  const spec = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', file), 'utf8')) as OpenApi & object;
  return { spec, id: `openapi${i}` };
});
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
for (const { spec, id } of specs) ajv.addSchema({ ...spec, $id: id });
const compiled = new Map<string, ValidateFunction>();

/**
 * Where real installers answer another status than the published spec lists,
 * the spec's schema for the status it lists: a token pair comes with 200, not 201.
 */
const OBSERVED_STATUS: Record<string, Record<number, string>> = { 'post /v1/tokens': { 200: '201' } };

function validatorFor(ref: object, id: string): ValidateFunction {
  const key = `${id} ${JSON.stringify(ref)}`;
  let fn = compiled.get(key);
  if (!fn) {
    const schema = JSON.parse(JSON.stringify(ref).replace(/"#\/components/g, `"${id}#/components`)) as object;
    fn = ajv.compile(schema);
    compiled.set(key, fn);
  }
  return fn;
}

function templateOf(spec: OpenApi, path: string): string | undefined {
  const bare = path.split('?')[0]!;
  return Object.keys(spec.paths).find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(bare));
}

type Operation = OpenApi['paths'][string][string];

/** The operation `method` `path` is in each version's spec that has it. */
function operationsOf(method: string, path: string): Array<{ op: Operation; id: string; template: string }> {
  return specs.flatMap(({ spec, id }) => {
    const template = templateOf(spec, path);
    const op = template ? spec.paths[template]![method.toLowerCase()] : undefined;
    return op && template ? [{ op, id, template }] : [];
  });
}

/**
 * Checks a response against the published structure of every version that
 * has the operation: the schema of its status when the spec lists one, the
 * Error schema for any other error, and no body where the spec has none.
 */
export function expectMatchesSpec(method: string, path: string, status: number, body: unknown): void {
  const found = operationsOf(method, path);
  for (const { op, id, template } of found) {
    const listedStatus = OBSERVED_STATUS[`${method.toLowerCase()} ${template}`]?.[status] ?? String(status);
    const listed = op.responses[listedStatus];
    // A status marked x-vmw-compiler-skip is listed without its body: the service's Error, as for any other error.
    const documented = listed && !listed['x-vmw-compiler-skip'] ? listed : undefined;
    const schema = documented ? documented.content?.['application/json']?.schema : status >= 400 ? { $ref: '#/components/schemas/Error' } : undefined;
    if (!schema) {
      expect(body, `${method} ${path} ${status} has no body in the spec`).toBeUndefined();
      continue;
    }
    const validate = validatorFor(schema, id);
    const ok = validate(body);
    expect(ok, `${method} ${path} ${status} (${id}): ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  // Paths outside the subsets answer only errors (404 for unknown operations).
  if (found.length === 0) expect(status).toBeGreaterThanOrEqual(400);
  if (status >= 400 && body !== undefined) expect(typeof (body as { errorCode?: unknown }).errorCode).toBe('string');
}

/** Checks a request body the client sent against the operation's published request schema (every version that has it). */
export function expectRequestMatchesSpec(method: string, path: string, body: unknown): void {
  const found = operationsOf(method, path);
  for (const { op, id } of found) {
    const schema = op.requestBody?.content['application/json']?.schema;
    if (!schema) {
      expect(body, `${method} ${path} takes no body`).toBeUndefined();
      continue;
    }
    const validate = validatorFor(schema, id);
    expect(validate(body), `${method} ${path} request (${id}): ${ajv.errorsText(validate.errors)}`).toBe(true);
  }
  expect(found.length > 0, `${method} ${path} is an operation of the spec`).toBe(true);
}

// ------------------------------------------------------------ raw HTTP

export interface Reply {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** A raw HTTPS call to the simulator trusting its certificate; every answer is checked against the spec. */
export async function call(
  sim: InstallerSimulator,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const agent = new Agent({ connect: { ca: sim.caPem } });
  try {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const res = await request(`${sim.url}${path}`, { method, headers, body, dispatcher: agent });
    const text = await res.body.text();
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    expectMatchesSpec(method, path, res.statusCode, parsed);
    return { status: res.statusCode, body: parsed, headers: res.headers };
  } finally {
    await agent.close();
  }
}

export async function login(sim: InstallerSimulator, user = USER, password = PASSWORD): Promise<{ accessToken: string; refreshToken: { id: string } }> {
  const reply = await call(sim, 'POST', '/v1/tokens', { body: { username: user, password } });
  expect(reply.status).toBe(200);
  return reply.body as { accessToken: string; refreshToken: { id: string } };
}

// ------------------------------------------------------------ a real depot

let caPromise: Promise<CaMaterial> | undefined;
/** One 2048-bit CA for the worker's life (key generation is the slow part), with a key no other certificate gets. */
export function depotCa(): Promise<CaMaterial> {
  caPromise ??= lastingKeys(() => createCa({ cn: 'depotkit installer test CA', keySize: 2048 }));
  return caPromise;
}

export interface TestDepot {
  server: DepotServer;
  ca: CaMaterial;
  host: string;
  port: number;
  /** The certificate it serves (the leaf, or the given chain). */
  certPem: string;
  close(): Promise<void>;
}

/**
 * The demo depot served over HTTPS with Basic auth, its certificate issued by
 * `depotCa()` for `localhost` and 127.0.0.1 (or the given certificate), on a free port or the given one.
 */
export async function startTestDepot(
  dir: string,
  opts: { cert?: { certPem: string; keyPem: string }; auth?: boolean; port?: number; binarySize?: number } = {},
): Promise<TestDepot> {
  const root = join(dir, 'depot');
  await makeDemoDepot(root, { binarySize: opts.binarySize ?? 1024, force: true, signingDir: join(dir, 'signing') });
  const ca = await depotCa();
  const cert = opts.cert ?? (await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 }));
  const server = await startDepotServer({
    root,
    host: '127.0.0.1',
    port: opts.port ?? 0,
    tls: { certPem: cert.certPem, keyPem: cert.keyPem },
    ...(opts.auth === false ? {} : { auth: { user: DEPOT_USER, password: DEPOT_PASSWORD } }),
  });
  return { server, ca, host: 'localhost', port: server.port, certPem: cert.certPem, close: () => server.close() };
}

export function depotSettings(host: string, port: number, password = DEPOT_PASSWORD, user = DEPOT_USER): object {
  return { offlineAccount: { username: user, password }, depotConfiguration: { isOfflineDepot: true, hostname: host, port } };
}

/** Runs `fn` with a client logged in as USER to a simulated installer (startSim with `opts`), and closes both whatever happens. */
export async function withClient<T>(fn: (client: InstallerClient, sim: InstallerSimulator) => Promise<T>, opts: InstallerSimulatorOptions = {}): Promise<T> {
  const sim = await startSim(opts);
  try {
    const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { caPems: [sim.caPem] } });
    try {
      return await fn(client, sim);
    } finally {
      await client.close();
    }
  } finally {
    await sim.close();
  }
}
