import { readFile, readdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { checkDepot } from '../../src/check/check.js';
import { makeDemoDepot } from '../../src/depot/demo.js';
import { FleetSession, resolveTargets, type TargetSpec } from '../../src/installer/session.js';
import { installerStatus } from '../../src/installer/status.js';
import { replaceCertificate } from '../../src/vcenter/index.js';
import { DepotTlsClient } from '../../src/simulators/installer/depot-tls.js';
import { BundleDownloads } from '../../src/simulators/installer/downloads.js';
import { ServiceLog } from '../../src/simulators/installer/log.js';
import { selfSignedCertificate, type ServedCertificate } from '../../src/simulators/vcenter/certs.js';
import { readCatalogBinaries } from '../depot/helpers.js';
import { refusal } from '../helpers/output.js';
import { useTempDir } from '../helpers/temp.js';
import { PASSWORD as INSTALLER_PASSWORD, USER as INSTALLER_USER, startSim, writeFleetInventory } from '../installer/helpers.js';
import { testCa } from '../vcenter/helpers.js';

const MiB = 1024 ** 2;
/** Where the hostile servers give up: far above any bound, so that a client without one reads all of it. */
const HOSTILE_CAP = 64 * MiB;
/** What a bounded client may have let the server send: its bound (4 MiB for an API answer) and the socket buffers. */
const SMALL = 32 * MiB;

interface Hostile {
  url: string;
  host: string;
  /** Bytes handed to the sockets over all answers. */
  sent(): number;
  requests: string[];
  close(): Promise<void>;
}

/** Streams a body until the client stops reading it (or HOSTILE_CAP), with the socket's back-pressure. */
function streamEndlessly(res: ServerResponse, count: (n: number) => void, head: Record<string, string> = { 'content-type': 'application/json' }): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  res.writeHead(200, head);
  res.write('{"accessToken":"');
  const pump = (): void => {
    while (sent < HOSTILE_CAP && !res.destroyed) {
      sent += chunk.length;
      count(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end('"}');
  };
  pump();
}

/** An HTTPS server that answers every request with a JSON body that never ends. */
async function startEndlessApi(cert: ServedCertificate): Promise<Hostile> {
  let total = 0;
  const requests: string[] = [];
  const server = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    streamEndlessly(res, (n) => (total += n));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    sent: () => total,
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** installer status's rows for `spec`, as the command runs it (a row fails on its own; any failed row is exit 1). */
async function statusRows(spec: TargetSpec) {
  const session = new FleetSession(await resolveTargets(spec), { concurrency: 4, timeoutMs: 30_000 });
  await session.resolvePasswords();
  return session.run(async (client, _target, appliance) => {
    const status = await installerStatus(client, { appliance });
    return { ok: status.depotCa?.flag === undefined, result: status };
  });
}

const tmp = useTempDir('depotkit-hostile-apis-');
let cert: ServedCertificate;
let certFile: string;
let passwordFile: string;

beforeAll(async () => {
  cert = await selfSignedCertificate('127.0.0.1', '127.0.0.1');
  certFile = join(tmp.dir, 'hostile.pem');
  await writeFile(certFile, cert.certPem);
  passwordFile = join(tmp.dir, 'password');
  await writeFile(passwordFile, `${INSTALLER_PASSWORD}\n`, { mode: 0o600 });
});

describe('API answers without end', () => {
  it('installer status: an endless answer to the log-in fails the installer with one sentence naming the host and the bound', async () => {
    const hostile = await startEndlessApi(cert);
    try {
      const [row] = await statusRows({ installer: hostile.url, user: INSTALLER_USER, passwordFile, installerCa: certFile });
      expect(row!.ok).toBe(false);
      expect(row!.error!.message).toBe(
        `The installer ${hostile.host} answered POST /v1/tokens with more than 4.0 MiB, more than any answer of its API holds; the rest was not read.`,
      );
      // Not retried, and cut off at the bound: the client never held more than that.
      expect(hostile.requests).toEqual(['POST /v1/tokens']);
      expect(hostile.sent()).toBeLessThan(SMALL);
    } finally {
      await hostile.close();
    }
  });

  it('installer status --inventory: one endless installer fails its own row, the real one beside it succeeds', async () => {
    const hostile = await startEndlessApi(cert);
    const sim = await startSim();
    try {
      const inventory = await writeFleetInventory(tmp.dir, [sim.caPem, cert.certPem], { hostile: hostile.url, real: sim.url });
      vi.stubEnv('FLEET_PASSWORD', INSTALLER_PASSWORD);
      const rows = await statusRows({ inventory });
      expect(rows.map((r) => [r.name, r.ok])).toEqual([
        ['hostile', false],
        ['real', true],
      ]);
      expect(rows[0]!.error!.message).toContain(`The installer ${hostile.host} answered POST /v1/tokens with more than 4.0 MiB`);
      expect(hostile.sent()).toBeLessThan(SMALL);
    } finally {
      vi.unstubAllEnvs();
      await Promise.all([hostile.close(), sim.close()]);
    }
  });

  it('mgmt replace-cert: an endless answer to the log-in ends the command with one sentence naming the host and the bound', async () => {
    const hostile = await startEndlessApi(cert);
    try {
      const res = await refusal(
        replaceCertificate({
          server: hostile.url,
          user: 'administrator@vsphere.local',
          password: INSTALLER_PASSWORD,
          ca: await testCa(),
          serverCaPems: [cert.certPem],
          dryRun: true,
        }),
      );
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toMatch(
        new RegExp(
          `^depotkit: The management server ${hostile.host} answered POST /api/session with more than 4\\.0 MiB, more than any answer of its API holds; the rest was not read\\.$`,
          'm',
        ),
      );
      expect(res.stderr).not.toMatch(/\n\s+at /);
      expect(hostile.requests).toEqual(['POST /api/session']);
      expect(hostile.sent()).toBeLessThan(SMALL);
    } finally {
      await hostile.close();
    }
  });
});

describe('depot binaries without end', () => {
  it('check --deep stops reading a binary one byte past its catalog size and reports its size as wrong', async () => {
    const root = join(tmp.dir, 'depot');
    await makeDemoDepot(root, { binarySize: 4096 });
    const [endless] = await readCatalogBinaries(root);
    let endlessBytes = 0;
    // The depot's files as they are, but the GET of one binary sends without end (HEAD still has the catalog's size).
    const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
      if (path === endless!.path && req.method === 'GET')
        return streamEndlessly(res, (n) => (endlessBytes += n), { 'content-type': 'application/octet-stream' });
      readFile(join(root, path)).then(
        (data) => {
          res.writeHead(200, { 'content-length': data.length });
          res.end(req.method === 'HEAD' ? undefined : data);
        },
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await checkDepot(`http://127.0.0.1:${port}`, { deep: true });
      // Not accepted: check exits 1.
      expect(result.accepted).toBe(false);
      expect(result.findings.filter((f) => f.path === endless!.path)).toEqual([
        expect.objectContaining({
          id: 'binary.size-mismatch',
          message: `GET ${endless!.path} sent more than the catalog's ${endless!.size} bytes; the check stopped reading one byte past them.`,
        }),
      ]);
      // The other binaries were hashed as usual.
      expect(result.findings.filter((f) => f.path !== endless!.path).map((f) => f.id)).toEqual(['http.plain']);
      expect(result.stats.hashed).toBe(result.stats.binaries - 1);
      expect(endlessBytes).toBeLessThan(SMALL);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('the installer simulator downloading from a depot without end', () => {
  it('stops a binary one byte past its catalog size and fails the bundle naming it; nothing is stored', async () => {
    let sent = 0;
    const server = createHttpServer((req, res) => {
      req.resume();
      streamEndlessly(res, (n) => (sent += n), { 'content-type': 'application/octet-stream' });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const store = join(tmp.dir, 'store');
    const downloads = new BundleDownloads(new ServiceLog(Date.now), Date.now, store);
    try {
      const { port } = server.address() as AddressInfo;
      const path = 'PROD/COMP/SDDC_MANAGER_VCF/endless.tar';
      const bundle = {
        id: 'b1',
        component: 'SDDC_MANAGER_VCF',
        productVersion: '9.0.0.0',
        name: 'endless',
        type: 'INSTALL',
        binaries: [{ fileName: 'endless.tar', size: 4096, checksum: '0'.repeat(64), path }],
        size: 4096,
      };
      downloads.start(bundle, {
        target: { https: false, host: '127.0.0.1', port, prefix: '' },
        account: {},
        trustedPems: [],
        options: { timeoutMs: 10_000, tls: new DepotTlsClient() },
      });
      await expect.poll(() => downloads.state('b1').status, { timeout: 30_000 }).toBe('FAILED');
      expect(downloads.state('b1').message).toBe(
        `Failed to download bundle endless: ${path}: the depot sent more than the catalog's 4096 bytes; the download was stopped.`,
      );
      expect(sent).toBeLessThan(SMALL);
      expect(await readdir(store, { recursive: true }).catch(() => [])).not.toContain(path);
    } finally {
      await downloads.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
