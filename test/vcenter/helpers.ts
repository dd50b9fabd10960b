import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import forge from 'node-forge';
import { Agent, request } from 'undici';
import { createCa, writeCaDir, type CaMaterial } from '../../src/cert/index.js';
import { mgmtApp, type MgmtState } from '../../src/simulators/vcenter/app.js';
import { selfSignedCertificate } from '../../src/simulators/vcenter/certs.js';
import { TrustedChains } from '../../src/simulators/vcenter/trusted-chains.js';
import { startMgmtSimulator, type MgmtSimulator, type MgmtSimulatorOptions } from '../../src/simulators/vcenter/index.js';
import { SessionStore } from '../../src/simulators/vcenter/sessions.js';
import { VlcmDepots } from '../../src/simulators/vcenter/vlcm-state.js';
import { newKey } from '../helpers/certs.js';
import { lastingKeys } from '../helpers/key-pool.js';

export const USER = 'administrator@vsphere.local';
export const PASSWORD = 'Secr3t-pa55!';

/** A simulator with a short restart, one known user, on 127.0.0.1 with a free port. */
export function startSim(opts: MgmtSimulatorOptions = {}): Promise<MgmtSimulator> {
  return startMgmtSimulator({ restartMs: 300, users: { [USER]: PASSWORD }, ...opts });
}

let caPromise: Promise<CaMaterial> | undefined;
/** One 2048-bit CA for the worker's life (key generation is the slow part), with a key no other certificate gets. */
export function testCa(): Promise<CaMaterial> {
  caPromise ??= lastingKeys(() => createCa({ cn: 'depotkit test CA', keySize: 2048 }));
  return caPromise;
}

export async function writeFixtures(dir: string, sim: MgmtSimulator, ca: CaMaterial): Promise<{ caDir: string; serverCa: string; passwordFile: string }> {
  const caDir = join(dir, 'ca');
  await writeCaDir(caDir, ca);
  const serverCa = join(dir, 'server-ca.pem');
  await writeFile(serverCa, sim.currentCertPem());
  const passwordFile = join(dir, 'password');
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  return { caDir, serverCa, passwordFile };
}

export const basic = (user = USER, password = PASSWORD) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Raw HTTPS calls to the simulator, trusting its current certificate. */
export async function call(
  sim: MgmtSimulator,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  opts: { headers?: Record<string, string>; body?: unknown; trust?: string } = {},
): Promise<{ status: number; body: unknown }> {
  const agent = new Agent({ connect: { ca: opts.trust ?? sim.currentCertPem() } });
  try {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await request(`${sim.url}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      dispatcher: agent,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text === '' ? undefined : JSON.parse(text) };
  } finally {
    await agent.close();
  }
}

/**
 * The simulator's app (the /api generation) on real HTTPS, behind routes that
 * `tweak` adds first: a server that misbehaves in one call, as no simulator option makes it.
 */
export async function startTweakedServer(
  tweak: (app: express.Express) => void,
): Promise<{ url: string; state: MgmtState; currentCertPem(): string; close(): Promise<void> }> {
  const current = await selfSignedCertificate('127.0.0.1', '127.0.0.1');
  const chains = new TrustedChains();
  chains.create([current.certPem]);
  const state: MgmtState = {
    hostname: '127.0.0.1',
    version: '9.0.0.0',
    users: { [USER]: PASSWORD },
    generations: ['api'],
    sessions: new SessionStore(60_000),
    current,
    chains,
    vlcm: new VlcmDepots(() => chains.pems()),
    onReplaced: () => {},
  };
  const outer = express();
  outer.use(express.json());
  tweak(outer);
  outer.use(mgmtApp(state));
  const server = createServer({ key: current.keyPem, cert: current.certPem }, outer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    currentCertPem: () => state.current.certPem,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A CA made with node-forge directly (not src/pki), so that a bug in the toolkit cannot hide one in a test. */
export interface ForgeCa {
  certPem: string;
  keyPem: string;
}

const DAY = 86_400_000;

function newCertificate(publicKey: forge.pki.PublicKey, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.serialNumber = `4${forge.util.bytesToHex(forge.random.getBytesSync(16)).slice(1)}`;
  cert.publicKey = publicKey;
  cert.validity.notBefore = new Date(Date.now() - DAY);
  cert.validity.notAfter = new Date(Date.now() + days * DAY);
  return cert;
}

function issuerKeyId(issuer: forge.pki.Certificate): string {
  return issuer.generateSubjectKeyIdentifier().getBytes();
}

/**
 * A root CA (no `issuer`, no path length limit, so it may have intermediates) or an
 * intermediate CA signed by `issuer` (path length 0: it signs leaves only).
 */
export function forgeCa(cn: string, issuer?: ForgeCa): ForgeCa {
  const { keyPem, key, publicKey } = newKey();
  const cert = newCertificate(publicKey, 3650);
  const subject = [{ shortName: 'CN', value: cn }];
  cert.setSubject(subject);
  const issuerCert = issuer ? forge.pki.certificateFromPem(issuer.certPem) : undefined;
  cert.setIssuer(issuerCert ? issuerCert.subject.attributes : subject);
  cert.setExtensions([
    issuer ? { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true } : { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: issuerCert ? issuerKeyId(issuerCert) : cert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(issuer ? forge.pki.privateKeyFromPem(issuer.keyPem) : key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n'), keyPem };
}

/** Signs a server's CSR as a leaf of `issuer`, copying its subject and requested SANs. */
export function forgeSignCsr(issuer: ForgeCa, csrPem: string, days = 365): string {
  const csr = forge.pki.certificationRequestFromPem(csrPem);
  const issuerCert = forge.pki.certificateFromPem(issuer.certPem);
  const cert = newCertificate(csr.publicKey!, days);
  cert.setSubject(csr.subject.attributes);
  cert.setIssuer(issuerCert.subject.attributes);
  const requested = (csr.getAttribute({ name: 'extensionRequest' }) as { extensions?: Array<{ name: string; altNames?: unknown[] }> } | null)?.extensions ?? [];
  const san = requested.find((e) => e.name === 'subjectAltName');
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    ...(san ? [{ name: 'subjectAltName', altNames: san.altNames }] : []),
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: issuerKeyId(issuerCert) },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(issuer.keyPem), forge.md.sha256.create());
  return forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');
}
