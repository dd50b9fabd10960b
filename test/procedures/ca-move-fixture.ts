import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { UMDS_PATCH_STORE_DIR } from '../../src/constants.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { InstallerClient, pushDepot, ensureTrusted, type InstallerTarget } from '../../src/installer/index.js';
import { createCa, issueServerCert, selfSignedServerCertificate, sha256Fingerprint, type CaMaterial, type ServerMaterial } from '../../src/cert/index.js';
import type { CaMoveOptions } from '../../src/procedures/index.js';
import { startInstallerSimulator, type InstallerSimulator } from '../../src/simulators/installer/index.js';
import { spawnCliJson, type CliChild } from '../helpers/cli.js';
import { useTempDir } from '../helpers/temp.js';
import { DEPOT_PASSWORD, DEPOT_USER, PASSWORD, USER } from '../installer/helpers.js';

export const PASSWORD_ENV = 'DEPOTKIT_TEST_CONSUMER_PASSWORD';
export const DEPOT_PASSWORD_ENV = 'DEPOTKIT_TEST_DEPOT_PASSWORD';
const VERSIONS = ['9.0.2.0.24920000', '9.1.0.0.25000000', '9.1.1.0.25100000'];

export interface MoveFixture {
  dir: string;
  oldCa: CaMaterial;
  newCa: CaMaterial;
  files: { served: { cert: string; key: string }; newCert: string; newKey: string; newCa: string; oldCa: string };
  serve: CliChild<{ url: string; port: number; pid: number }>;
  /** The depot as the consumers know it: by `depotName` when given. */
  depotUrl: string;
  /** The depot as this host reaches it: its address. */
  addressUrl: string;
  sims: Array<InstallerSimulator | undefined>;
  targets: InstallerTarget[];
  /** Starts (or restarts, on its port and state) the simulated consumer `i`. */
  startConsumer(i: number): Promise<InstallerSimulator>;
  close(): Promise<void>;
}

/** The CAs and certificates of the fixtures of a test file, by the depot's name: made once, each fixture a move of its own all the same. */
const PKI = new Map<string, Promise<{ oldCa: CaMaterial; newCa: CaMaterial; oldLeaf: ServerMaterial; newLeaf: ServerMaterial }>>();

function pki(depotName: string): Promise<{ oldCa: CaMaterial; newCa: CaMaterial; oldLeaf: ServerMaterial; newLeaf: ServerMaterial }> {
  let made = PKI.get(depotName);
  if (!made) {
    made = (async () => {
      // 2048-bit keys: the move judges and serves them as any other, and they are made several times faster than the CA profile's.
      const [oldCa, newCa] = await Promise.all([createCa({ cn: 'Old Depot CA', keySize: 2048 }), createCa({ cn: 'New Depot CA', keySize: 2048 })]);
      const names = { dns: [depotName], ips: ['127.0.0.1'], keySize: 2048 as const };
      const [oldLeaf, newLeaf] = await Promise.all([issueServerCert(oldCa, names), issueServerCert(newCa, names)]);
      return { oldCa, newCa, oldLeaf, newLeaf };
    })();
    PKI.set(depotName, made);
  }
  return made;
}

/**
 * A depot served by `depotkit serve` on the old CA, and `count` consumers (mixed versions and roles) that
 * trust it and are pointed at it; with `depotName`, by that name, which only the consumers resolve (to 127.0.0.1).
 * With `restartable`, the consumers keep their state in `dir`, for `startConsumer` to bring one back as it was.
 */
export async function moveFixture(
  dir: string,
  count: number,
  { depotName, restartable }: { depotName?: string; restartable?: boolean } = {},
): Promise<MoveFixture> {
  const { oldCa, newCa, oldLeaf, newLeaf } = await pki(depotName ?? 'localhost');
  const files = {
    served: { cert: join(dir, 'served-cert.pem'), key: join(dir, 'served-key.pem') },
    newCert: join(dir, 'new-cert.pem'),
    newKey: join(dir, 'new-key.pem'),
    newCa: join(dir, 'new-ca.pem'),
    oldCa: join(dir, 'old-ca.pem'),
  };
  await Promise.all([
    writeFile(files.served.cert, oldLeaf.certPem),
    writeFile(files.served.key, oldLeaf.keyPem, { mode: 0o600 }),
    writeFile(files.newCert, newLeaf.certPem),
    writeFile(files.newKey, newLeaf.keyPem, { mode: 0o600 }),
    writeFile(files.newCa, newCa.certPem),
    writeFile(files.oldCa, oldCa.certPem),
  ]);
  const root = join(dir, 'depot');
  await makeDemoDepot(root, { binarySize: 1024, force: true, signingDir: join(dir, 'signing') });
  const env = { [DEPOT_PASSWORD_ENV]: DEPOT_PASSWORD };
  const serve = await spawnCliJson<{ url: string; port: number; pid: number }>(
    [
      'serve',
      root,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--cert',
      files.served.cert,
      '--key',
      files.served.key,
      '--user',
      DEPOT_USER,
      '--password-env',
      DEPOT_PASSWORD_ENV,
      '--workers',
      '2',
      // The ESX depot a vCenter among the consumers syncs, open as vLCM needs it (absent unless a test makes it).
      '--open',
      UMDS_PATCH_STORE_DIR,
      '--json',
    ],
    { env },
  );
  const addressUrl = `https://127.0.0.1:${serve.info.port}`;
  const depotUrl = depotName ? `https://${depotName}:${serve.info.port}` : addressUrl;
  const fleet = await startConsumers(restartable ? dir : undefined, count, depotName ? { [depotName]: '127.0.0.1' } : undefined);
  await trustAndPoint(fleet.sims, oldCa.certPem, depotUrl);
  const { sims, targets, startConsumer } = fleet;
  const close = async (): Promise<void> => {
    serve.child.kill('SIGTERM');
    await serve.exited;
    await Promise.all(sims.map((s) => s?.close()));
  };
  return { dir, oldCa, newCa, files, serve, depotUrl, addressUrl, sims, targets, startConsumer, close };
}

/**
 * `count` simulated consumers (mixed versions and roles), each keeping its state in `dir` (for a restart;
 * without `dir` none is kept: every depot push would write and sync a file) and resolving the names of
 * `resolve`, and their inventory entries.
 */
export async function startConsumers(
  dir: string | undefined,
  count: number,
  resolve?: Record<string, string>,
): Promise<Pick<MoveFixture, 'sims' | 'targets' | 'startConsumer'>> {
  const sims: Array<InstallerSimulator | undefined> = new Array(count).fill(undefined);
  const ports: number[] = [];
  // One certificate for the fleet, not a key made per consumer: the move reaches them insecure.
  const tls = await selfSignedServerCertificate('127.0.0.1', '127.0.0.1', 729);
  const startConsumer = async (i: number): Promise<InstallerSimulator> => {
    const sim = await startInstallerSimulator({
      tls,
      users: { [USER]: PASSWORD },
      version: VERSIONS[i % VERSIONS.length],
      role: i % 4 === 3 ? 'SddcManager' : 'VcfInstaller',
      ...(dir ? { stateFile: join(dir, `consumer-${i}.json`) } : {}),
      ...(resolve ? { resolve } : {}),
      ...(ports[i] ? { port: ports[i] } : {}),
    });
    ports[i] = sim.port;
    sims[i] = sim;
    return sim;
  };
  await Promise.all(Array.from({ length: count }, (_, i) => startConsumer(i)));
  process.env[PASSWORD_ENV] = PASSWORD;
  const targets: InstallerTarget[] = sims.map((sim, i) => ({ name: `consumer-${i}`, url: sim!.url, user: USER, passwordEnv: PASSWORD_ENV, insecure: true }));
  return { sims, targets, startConsumer };
}

/** Before a move: each consumer trusts the old CA and validated the depot. */
export async function trustAndPoint(sims: Array<InstallerSimulator | undefined>, oldCaPem: string, depotUrl: string): Promise<void> {
  await Promise.all(
    sims.map(async (sim) => {
      const client = await InstallerClient.connect({ url: sim!.url, user: USER, password: PASSWORD, trust: { insecure: true } });
      try {
        await ensureTrusted(client, [oldCaPem]);
        const push = await pushDepot(client, depotSpec(depotUrl));
        if (!push.ok) throw new Error(`consumer ${sim!.url} refused the depot before the move: ${push.errorCode}`);
      } finally {
        await client.close();
      }
    }),
  );
}

export function depotSpec(depotUrl: string): { url: string; username: string; password: string } {
  return { url: depotUrl, username: DEPOT_USER, password: DEPOT_PASSWORD };
}

/** Does the consumer list the certificate (by SHA-256)? */
export async function holds(sim: InstallerSimulator, pem: string): Promise<boolean> {
  const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { insecure: true } });
  try {
    const want = sha256Fingerprint(pem);
    return (await client.listTrusted()).elements.some((e) => sha256Fingerprint(e.certificate) === want);
  } finally {
    await client.close();
  }
}

/** Validations counted by consumer while a move runs. */
export interface ValidationTally {
  ok: number;
  failed: Array<{ consumer: number; errorCode?: string; message?: string }>;
  perConsumer: number[];
  /** The longest validation so far, in ms. */
  longestMs?: number;
}

/**
 * Each running consumer validates the depot (the depot settings update, as the
 * client sends it) every 200 ms until `stop` resolves; a consumer that is down
 * is left alone. `tally` is counted into as the validations come back.
 */
export async function validateContinuously(
  fx: Pick<MoveFixture, 'sims' | 'depotUrl'>,
  stop: Promise<unknown>,
  tally: ValidationTally = { ok: 0, failed: [], perConsumer: fx.sims.map(() => 0) },
): Promise<ValidationTally> {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  await Promise.all(
    fx.sims.map(async (sim, i) => {
      if (!sim) return;
      const client = await InstallerClient.connect({ url: sim.url, user: USER, password: PASSWORD, trust: { insecure: true } });
      try {
        // Bounded: a move in these tests takes seconds.
        for (let round = 0; round < 3000 && !stopped; round++) {
          const began = Date.now();
          const push = await pushDepot(client, depotSpec(fx.depotUrl), { force: true });
          tally.longestMs = Math.max(tally.longestMs ?? 0, Date.now() - began);
          tally.perConsumer[i]!++;
          if (push.ok) tally.ok++;
          else tally.failed.push({ consumer: i, errorCode: push.errorCode, message: push.message });
          await new Promise((r) => setTimeout(r, 200));
        }
      } finally {
        await client.close();
      }
    }),
  );
  return tally;
}

/** The phases of a whole move with `removeOld`, in order. */
export const MOVE_PHASES = ['plan', 'import', 'prove', 'switch', 'revalidate', 'retire'];

/** The options of a move of the fixture's depot (served by `depotkit serve`) over its consumers, with `extra` over them. */
export function serveMoveOptions(fx: MoveFixture, extra: Partial<CaMoveOptions> = {}): CaMoveOptions {
  return {
    newCert: fx.files.newCert,
    newKey: fx.files.newKey,
    newCa: fx.files.newCa,
    oldCa: fx.files.oldCa,
    served: { kind: 'serve', pid: fx.serve.info.pid, certFile: fx.files.served.cert, keyFile: fx.files.served.key },
    depot: depotSpec(fx.depotUrl),
    consumers: fx.targets,
    concurrency: 8,
    timeoutMs: 30_000,
    ...extra,
  };
}

/** Runs `move` while every consumer validates the depot every 200 ms (`validateContinuously`), until the move ends. */
export async function whileValidating<T>(fx: Pick<MoveFixture, 'sims' | 'depotUrl'>, move: () => Promise<T>): Promise<{ result: T; tally: ValidationTally }> {
  let done!: () => void;
  const tallying = validateContinuously(fx, new Promise<void>((r) => (done = r)));
  const [result, tally] = await Promise.all([move().finally(() => done()), tallying]);
  return { result, tally };
}

/**
 * Registers, for the calling block, a move fixture of `count` consumers in a temporary folder of its own: made
 * before the block's tests (before each test with `each`), closed and removed after them; `set` is given it.
 */
export function useMoveFixture(prefix: string, count: number, set: (fx: MoveFixture) => void, options: { each?: boolean } = {}): void {
  const tmp = useTempDir(prefix, options);
  let fx: MoveFixture | undefined;
  const make = async (): Promise<void> => {
    fx = await moveFixture(tmp.dir, count);
    set(fx);
  };
  const close = async (): Promise<void> => {
    await fx?.close();
    fx = undefined;
  };
  if (options.each) {
    beforeEach(make, 120_000);
    afterEach(close);
  } else {
    beforeAll(make, 120_000);
    afterAll(close);
  }
}
