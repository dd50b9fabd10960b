import { resolve } from 'node:path';
import { DEPOT_PATHS } from '../constants.js';
import { makeDemoDepot, type DemoResult } from '../depot/demo.js';
import { SIGNING_PUBLIC_FILE } from '../depot/signature.js';
import { verifyDepot, type VerifyResult } from '../depot/verify.js';
import { exists, readFileBounded } from '../util/fs.js';
import { PEM_LIMITS } from '../util/limits.js';
import { prepareDemoServing, type DemoServing } from './demo.js';
import { startDepot, type RunningDepot } from './workers.js';

export interface QuickstartOptions {
  /** Where the demo depot is, or is made. */
  depotDir: string;
  /** Where the demo CA, server certificate and password are, or are made. */
  pkiDir: string;
  /** Serve the depot once it verifies; without it, only make and verify. */
  serve?: { host: string; port: number; graceMs: number };
  /** Told each step's outcome as it ends, so that a caller can show it before the next begins. */
  onStep?: (step: QuickstartStep) => void;
}

/** A step of the quickstart, once done: the depot found or made, verified, and the serving material found or made. */
export type QuickstartStep =
  { step: 'depot'; dir: string; made?: DemoResult } | { step: 'verified'; result: VerifyResult } | { step: 'serving-material'; demo: DemoServing };

export interface Quickstart {
  dir: string;
  /** The depot made now; absent when an earlier run's was used. */
  made?: DemoResult;
  verify: VerifyResult;
  /** The server and what it serves with, when asked to serve and the depot verified. */
  serving?: { demo: DemoServing; running: RunningDepot };
}

/**
 * The demo from nothing: makes the demo depot unless an earlier run finished
 * it, verifies it deeply (its own catalog signature included) and, when asked
 * and it verified, serves it over HTTPS with Basic auth on the demo CA's
 * certificate and a random password. The caller stops the server.
 */
export async function quickstart(opts: QuickstartOptions): Promise<Quickstart> {
  const dir = resolve(opts.depotDir);
  // The demo writes its catalog last: without it, an earlier run was interrupted and is made again.
  const made = (await exists(resolve(dir, DEPOT_PATHS.catalog))) ? undefined : await makeDemoDepot(dir, { force: true });
  opts.onStep?.({ step: 'depot', dir, ...(made ? { made } : {}) });
  const verify = await verifyDepot(dir, { deep: true, signingCertPem: await demoSigningKey(dir) });
  opts.onStep?.({ step: 'verified', result: verify });
  if (!opts.serve || !verify.ok) return { dir, ...(made ? { made } : {}), verify };
  const demo = await prepareDemoServing(opts.pkiDir);
  opts.onStep?.({ step: 'serving-material', demo });
  const tls = { certFile: demo.certPath, keyFile: demo.keyPath };
  const running = await startDepot(
    { root: dir, host: opts.serve.host, port: opts.serve.port, tls, auth: { user: demo.user, password: demo.password } },
    1,
    opts.serve.graceMs,
  );
  return { dir, ...(made ? { made } : {}), verify, serving: { demo, running } };
}

/** Where makeDemoDepot keeps the signing key by default: its own signature is verified, not reported as unverified. */
async function demoSigningKey(dir: string): Promise<string | undefined> {
  const path = resolve(`${dir}-signing`, SIGNING_PUBLIC_FILE);
  return (await exists(path)) ? (await readFileBounded(path, PEM_LIMITS.maxFileBytes, 'PEM file')).toString('utf8') : undefined;
}
