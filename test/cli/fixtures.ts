import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { createCa, issueServerCert, writeCaDir, writeServerDir, type CaMaterial } from '../../src/cert/index.js';
import { startDepotServer, type DepotServer } from '../../src/server/index.js';
import { spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

export const DEPOT_USER = 'depot';
export const DEPOT_PASSWORD = 'Dep0t-cli-pw';

export interface CliFixture {
  dir: string;
  /** A CA folder (cert ca's layout) and its material. */
  caDir: string;
  ca: CaMaterial;
  /** A server folder (cert issue's layout) for localhost and 127.0.0.1. */
  serverDir: string;
  chainFile: string;
  keyFile: string;
  /** A small signed demo depot. */
  depot: string;
  /** The depot password, first line, mode 0600. */
  passwordFile: string;
}

/** The files most CLI tests need, made with the library (fast: one 2048-bit CA, one server key). */
export async function makeFixture(dir: string): Promise<CliFixture> {
  const ca = await createCa({ keySize: 2048 });
  const caDir = join(dir, 'ca');
  await writeCaDir(caDir, ca);
  const serverDir = join(dir, 'server');
  const paths = await writeServerDir(serverDir, await issueServerCert(ca, { dns: ['localhost'], ips: ['127.0.0.1'], keySize: 2048 }));
  const depot = join(dir, 'depot');
  await makeDemoDepot(depot, { binarySize: 512, signingDir: join(dir, 'signing') });
  const passwordFile = join(dir, 'depot-password');
  await writeFile(passwordFile, `${DEPOT_PASSWORD}\n`, { mode: 0o600 });
  return { dir, caDir, ca, serverDir, chainFile: paths.chainPath, keyFile: paths.keyPath, depot, passwordFile };
}

/** The fixture's depot served over HTTPS with Basic auth, in this process. */
export function serveFixture(f: CliFixture): Promise<DepotServer> {
  return startDepotServer({
    root: f.depot,
    host: '127.0.0.1',
    port: 0,
    tls: { certFile: f.chainFile, keyFile: f.keyFile },
    auth: { user: DEPOT_USER, password: DEPOT_PASSWORD },
  });
}

/**
 * A fixture in a temporary folder, its depot served, for the tests of one
 * describe block: made before them, stopped and removed after them.
 */
export function useServedFixture(prefix: string): { fixture(): CliFixture; server(): DepotServer } {
  let cleanup: (() => Promise<void>) | undefined;
  let fixture: CliFixture | undefined;
  let server: DepotServer | undefined;
  beforeAll(async () => {
    const t = await tempDir(prefix);
    cleanup = t.cleanup;
    fixture = await makeFixture(t.dir);
    server = await serveFixture(fixture);
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });
  return { fixture: () => fixture!, server: () => server! };
}

/** An environment without npm's variables: the CLI as run from the PATH, whatever runs the tests. */
export function withoutNpm(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { npm_lifecycle_event: '', npm_lifecycle_script: '', npm_package_name: '' };
  return { ...env, ...extra };
}

/** The environment npx gives the command it runs (`npx depotkit ...`). */
export const AS_NPX: NodeJS.ProcessEnv = { npm_lifecycle_event: 'npx', npm_lifecycle_script: 'depotkit', npm_command: 'exec' };

/**
 * Runs the built CLI with its stdout closed by the reader before it writes (as
 * `| head` does once it has read enough): resolves with the exit code and stderr.
 */
export function runWithClosedStdout(args: string[], options: { cwd?: string } = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, { cwd: options.cwd });
    // Our end of the pipe closes at once: the CLI's first write meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}
