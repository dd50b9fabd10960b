import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { DepotkitError, EXIT, errorMessage } from '../../util/errors.js';
import { readFileBounded, sameFile, writeFileSetAtomic, type FileToWrite } from '../../util/fs.js';
import { PEM_LIMITS } from '../../util/limits.js';
import { INSTALLER_DEFAULTS } from '../../installer/index.js';
import { type ServedChain, servedCertificate, waitUntilServed } from '../../net/index.js';
import { PRIVATE_KEY_MODE, keptAttributes } from '../../cert/index.js';
import type { CaMoveMaterial } from './plan.js';
import { reachText, type DepotReach } from './reach.js';
import { checkServeProcess } from './serve-process.js';
import type { ServedDepot } from './types.js';

const run = promisify(execFile);
const POLL_MS = 250;

/**
 * The SHA-256 of the certificate the depot serves now, or undefined when it does not answer. Only the
 * certificate is read: trust is what the consumers judge. `serverName`: the consumers' name for the depot,
 * when `depotUrl` is its address as this host reaches it.
 */
export async function servedLeafSha256(depotUrl: string, timeoutMs: number, serverName?: string): Promise<string | undefined> {
  return (await servedNow(depotUrl, timeoutMs, serverName))?.leafSha256;
}

/** What the depot presents now (its chain as sent), or undefined when it does not answer. */
async function servedNow(depotUrl: string, timeoutMs: number, serverName?: string): Promise<(ServedChain & { leafSha256: string }) | undefined> {
  const served = await servedCertificate(depotOrigin(depotUrl), { timeoutMs, ...(serverName ? { asHost: serverName } : {}) });
  return served.ok ? { chainPems: served.chainPems, protocol: served.protocol, leafSha256: served.leafSha256 } : undefined;
}

/** The depot's URL with its port spelt: a depot is served on the installer's default port when none is given. */
function depotOrigin(depotUrl: string): URL {
  const url = new URL(depotUrl);
  return url.port ? url : new URL(`${url.protocol}//${url.host}:${INSTALLER_DEFAULTS.depotPort}`);
}

/** A served file's text, read as a PEM file is (a regular file, bounded); undefined when it cannot be. */
function readServed(path: string): Promise<string | undefined> {
  return readFileBounded(path, PEM_LIMITS.maxFileBytes, 'PEM file').then(
    (data) => data.toString('utf8'),
    () => undefined,
  );
}

/** A file of the new pair: its path, its text, and whether it holds the private key. */
interface PairFile {
  path: string;
  data: string;
  kind: 'private-key' | 'public';
}

/**
 * The files the new pair goes to. A certificate and key served from one file (nginx and HAProxy take the
 * key in the certificate's file) get one file again, a private key's: the chain then the key, or the key
 * first when the file in place has it first.
 */
async function pairFiles(material: CaMoveMaterial, served: ServedDepot): Promise<PairFile[]> {
  if (resolve(served.certFile) === resolve(served.keyFile) || (await sameFile(served.certFile, served.keyFile))) {
    // Written where the file is: a link to it keeps naming the new pair.
    const path = await realpath(served.keyFile).catch(() => served.keyFile);
    const keyFirst = /-----BEGIN ([A-Z0-9 ]+)-----/.exec((await readServed(path)) ?? '')?.[1]?.endsWith('PRIVATE KEY') === true;
    const [first, second] = keyFirst ? [material.keyText, material.certText] : [material.certText, material.keyText];
    return [{ path, data: `${first}${first.endsWith('\n') ? '' : '\n'}${second}`, kind: 'private-key' }];
  }
  return [
    { path: served.keyFile, data: material.keyText, kind: 'private-key' },
    { path: served.certFile, data: material.certText, kind: 'public' },
  ];
}

/**
 * Writes the new pair over the served files, with the owner, group and mode of the files they replace:
 * renamed into place, a crash leaves the old pair or the new one.
 */
async function writePair(material: CaMoveMaterial, served: ServedDepot): Promise<void> {
  const files: FileToWrite[] = [];
  // One after the other: the key's refusal, when both would be refused, is the one said.
  for (const { kind, ...file } of await pairFiles(material, served)) {
    files.push({ ...file, ...(kind === 'private-key' ? { mode: PRIVATE_KEY_MODE } : {}), ...(await keptAttributes(file.path, kind)) });
  }
  await writeFileSetAtomic(files, { force: true, currentSetIsWhole: async () => true });
}

/** The switch's waits when `CaMoveOptions` gives none, in milliseconds (each said there). */
export const CA_MOVE_WAITS = { switchTimeoutMs: 30_000, trustSettleMs: 5_000, reloadUnderWayMs: 5_000 } as const;

/** The switch's waits, in milliseconds: `CaMoveOptions`'s, with their defaults filled in. */
export interface SwitchWaits {
  /** How long the server gets to serve the new certificate after its reload. */
  timeoutMs: number;
  /** `CaMoveOptions.trustSettleMs`. */
  trustSettleMs: number;
  /** `CaMoveOptions.reloadUnderWayMs`. */
  reloadUnderWayMs: number;
}

async function settle(ms: number, signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
  if (signal?.aborted) throw new DepotkitError('The move was interrupted before the switch; nothing was written.', EXIT.problems);
}

/** What is served where this host reaches the depot, as the consumers are shown it. */
function servedThere(reach: DepotReach): ReturnType<typeof servedNow> {
  return servedNow(reach.origin, 5_000, reach.serverName);
}

/** Do the served files hold the new pair (written by an earlier run)? */
async function holdsPair(material: CaMoveMaterial, served: ServedDepot): Promise<boolean> {
  const files = await pairFiles(material, served);
  const held = await Promise.all(files.map(async (f) => (await readServed(f.path)) === f.data));
  return held.every(Boolean);
}

/** The chain the depot serves once it presents the certificate, within `ms`; undefined when it does not. */
async function servedWithin(reach: DepotReach, leafSha256: string, ms: number, signal?: AbortSignal): Promise<ServedChain | undefined> {
  const waited = await waitUntilServed(depotOrigin(reach.origin), leafSha256, {
    waitMs: ms,
    timeoutMs: 5_000,
    pollMs: POLL_MS,
    ...(reach.serverName ? { asHost: reach.serverName } : {}),
    ...(signal ? { signal } : {}),
  });
  return waited.shown;
}

/**
 * The server's own reason for a failed reload: the first line of its error output but JSON log lines
 * (Caddy logs those before its `Error:` line; nginx and Apache write the reason first), else the error's.
 */
function reloadFailure(err: unknown): string {
  const stderr = String((err as { stderr?: unknown }).stderr ?? '');
  const reason = stderr
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '' && !line.startsWith('{'));
  return reason ?? errorMessage(err).split('\n')[0]!;
}

async function reload(served: ServedDepot): Promise<'reloaded' | 'reload-needed'> {
  if (served.kind === 'serve') {
    try {
      process.kill(served.pid, 'SIGHUP');
    } catch (err) {
      throw new DepotkitError(`Cannot signal serve (pid ${served.pid}): ${errorMessage(err)}.`, EXIT.environment, 'Give the pid of the running serve.');
    }
    return 'reloaded';
  }
  if (!served.reloadCommand) return 'reload-needed';
  try {
    await run('/bin/sh', ['-c', served.reloadCommand]);
  } catch (err) {
    throw new DepotkitError(`The reload command "${served.reloadCommand}" failed: ${reloadFailure(err)}`, EXIT.problems);
  }
  return 'reloaded';
}

/** What the switch did, and the chain the depot serves after it, as read there (for check's verdict). */
export type SwitchOutcome = { action: 'switched' | 'already-served'; served: ServedChain } | { action: 'reload-needed' };

/**
 * Switch: writes the new pair, reloads the server and waits until the depot
 * serves the new certificate. The old one stays served if any step fails.
 */
export async function switchServed(
  material: CaMoveMaterial,
  served: ServedDepot,
  reach: DepotReach,
  leafSha256: string,
  waits: SwitchWaits,
  signal?: AbortSignal,
): Promise<SwitchOutcome> {
  const now = await servedThere(reach);
  if (now?.leafSha256 === leafSha256) return { action: 'already-served', served: now };
  // A re-run after a stop for the reload finds the pair written: a reload sent just before may still be under way.
  const written = served.kind === 'site' && !served.reloadCommand && (await holdsPair(material, served));
  if (served.kind === 'site' && served.reloadCommand) await settle(waits.trustSettleMs, signal);
  // Again right before the write: serve may have stopped, and its pid gone to another process, since the plan.
  await checkServeProcess(served);
  if (!written) await writePair(material, served);
  if ((await reload(served)) === 'reload-needed') {
    const taken = written ? await servedWithin(reach, leafSha256, waits.reloadUnderWayMs, signal) : undefined;
    return taken ? { action: 'already-served', served: taken } : { action: 'reload-needed' };
  }
  const { timeoutMs } = waits;
  const switched = await servedWithin(reach, leafSha256, timeoutMs, signal);
  if (switched) return { action: 'switched', served: switched };
  // The pair is written and the reload sent: a re-run finds the new certificate served, or waits for it again.
  if (signal?.aborted) throw new DepotkitError(`The move was interrupted while waiting for ${reachText(reach)} to serve the new certificate.`, EXIT.problems);
  throw new DepotkitError(
    `The depot at ${reachText(reach)} does not serve the new certificate ${Math.round(timeoutMs / 1000)} s after the reload.`,
    EXIT.problems,
    "Look at the server's log: it keeps the old pair when it cannot load the new one.",
  );
}
