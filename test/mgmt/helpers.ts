import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createCa, writeCaDir, type CaMaterial } from '../../src/pki/index.js';
import { startMgmtSimulator, type MgmtSimulator, type MgmtSimulatorOptions } from '../../src/simulators/mgmt/index.js';

export const USER = 'administrator@vsphere.local';
export const PASSWORD = 'Secr3t-pa55!';

/** A simulator with a short restart, one known user, on 127.0.0.1 with a free port. */
export function startSim(opts: MgmtSimulatorOptions = {}): Promise<MgmtSimulator> {
  return startMgmtSimulator({ restartMs: 300, users: { [USER]: PASSWORD }, ...opts });
}

let caPromise: Promise<CaMaterial> | undefined;
/** One 2048-bit CA shared by a test file (key generation is the slow part). */
export function testCa(): Promise<CaMaterial> {
  caPromise ??= createCa({ cn: 'depotkit test CA', keySize: 2048 });
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
    const res = await request(`${sim.url}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), dispatcher: agent });
    const text = await res.body.text();
    return { status: res.statusCode, body: text === '' ? undefined : JSON.parse(text) };
  } finally {
    await agent.close();
  }
}

export const sha256Of = (pem: string) => new X509Certificate(pem).fingerprint256.replace(/:/g, '').toLowerCase();
