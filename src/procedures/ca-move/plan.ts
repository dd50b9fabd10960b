import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isIP } from 'node:net';
import { readCertificate, sha256Fingerprint, splitPemBlocks } from '../../cert/index.js';
// check's verdict on a chain alone, not its index: the move's command loads none of check's HTTP phases.
import { judgeChain } from '../../check/tls.js';
import { DepotkitError, EXIT, describeFsError, usageError } from '../../util/errors.js';
import type { Finding } from '../../util/findings.js';
import type { ServedChain } from '../../net/index.js';
import { consumersDepotUrl, reachOf, reachText, type DepotReach } from './reach.js';
import { reloadHintText, reloadHints } from './reload-hint.js';
import type { CaMoveOptions, CaMovePlan } from './types.js';
import { hostOf } from '../../util/url.js';

/** The name of the state file beside the served certificate. */
export const CA_MOVE_STATE_FILE = 'depotkit-ca-move.json';

/** The PEM material of a move, read once. */
export interface CaMoveMaterial {
  certText: string;
  keyText: string;
  newCaPem: string;
  oldCaPem?: string;
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw describeFsError(err, path);
  }
}

function oneCertificate(text: string, source: string): string {
  const [pem] = splitPemBlocks(text, 'CERTIFICATE');
  if (!pem) throw usageError(`${source} holds no certificate (no BEGIN CERTIFICATE block).`);
  return pem;
}

function summary(pem: string): { subject: string; sha256: string } {
  const cert = readCertificate(pem);
  return { subject: cert.subject, sha256: cert.fingerprints.sha256 };
}

export async function readMaterial(opts: CaMoveOptions): Promise<CaMoveMaterial> {
  if (opts.removeOld && !opts.oldCa)
    throw usageError('Removing the old CA needs the old CA certificate (`oldCa`): it is looked up by certificate, not by alias.');
  const [certText, keyText, newCaText, oldCaText] = await Promise.all([
    readText(opts.newCert),
    readText(opts.newKey),
    readText(opts.newCa),
    opts.oldCa ? readText(opts.oldCa) : Promise.resolve(undefined),
  ]);
  const newCaPem = oneCertificate(newCaText, opts.newCa);
  const oldCaPem = oldCaText !== undefined ? oneCertificate(oldCaText, opts.oldCa!) : undefined;
  // Compared by certificate: the old CA's retirement would remove from every consumer the CA the new certificate needs.
  const newCaSha256 = sha256Fingerprint(newCaPem);
  if (oldCaPem !== undefined && sha256Fingerprint(oldCaPem) === newCaSha256) {
    throw usageError(
      `The old CA ${opts.oldCa} is the new CA ${opts.newCa} (SHA-256 ${newCaSha256}): retiring it would leave the consumers trusting nothing the depot serves.`,
      'Give as `oldCa` the CA that issued the certificate the depot serves now.',
    );
  }
  return { certText, keyText, newCaPem, ...(oldCaPem !== undefined ? { oldCaPem } : {}) };
}

/** Does the key belong to the certificate? Compared by public key, as a TLS server would fail on it. */
function keyMatches(certPem: string, keyText: string, keyFile: string): boolean {
  let key;
  try {
    key = createPrivateKey(keyText);
  } catch {
    throw usageError(`${keyFile} is not a private key depotkit can read (an encrypted key cannot be served).`);
  }
  return readCertificate(certPem).pairsWith(key);
}

/** What the consumers' judging of a chain takes: the new CA, the depot's host and the other names they use. */
interface ConsumersView {
  newCaPem: string;
  depotHost: string;
  names: readonly string[];
  /** The depot's address as this host reaches it, when it is one: the SAN's name and address are judged as a pair. */
  address?: string;
  /** The protocol the depot negotiated, for a chain it serves. */
  protocol?: string | null;
}

/**
 * `check`'s verdict on a chain (`judgeChain`, its finding ids) for every name the consumers use: the
 * depot's host, then each other name as check judges it given that name (`asHost`); what the names
 * share is said once.
 */
function judgeForConsumers(chain: string[], view: ConsumersView): Finding[] {
  const judging = { caPems: [view.newCaPem], ...(view.protocol !== undefined ? { protocol: view.protocol } : {}) };
  const findings = judgeChain(chain, { ...judging, hostName: view.depotHost, ...(view.address !== undefined ? { address: view.address } : {}) });
  const said = new Set(findings.map((f) => `${f.id} ${f.message}`));
  for (const name of view.names) {
    for (const f of judgeChain(chain, { ...judging, hostName: name })) {
      const key = `${f.id} ${f.message}`;
      if (said.has(key)) continue;
      said.add(key);
      findings.push(f);
    }
  }
  return findings;
}

/** The reached address, when the depot is reached at one (for the SAN's name and address as a pair). */
function addressOf(origin: string): string | undefined {
  const host = hostOf(new URL(origin));
  return isIP(host) !== 0 ? host : undefined;
}

/**
 * The new pair judged by `check`'s own verdict on a served chain (`judgeChain`, its finding ids): it
 * chains to the new CA, names the depot's host (and every other name the consumers use), is valid now,
 * the CA not about to lapse; and, which check cannot see, the key is its own. `address`: the depot's
 * address as this host reaches it, when it is one, for the SAN's name and address as a pair.
 */
export function judgeNewPair(material: CaMoveMaterial, opts: CaMoveOptions, depotHost: string, address?: string): Finding[] {
  const leafPem = oneCertificate(material.certText, opts.newCert);
  const chain = splitPemBlocks(material.certText, 'CERTIFICATE');
  const view = { newCaPem: material.newCaPem, depotHost, names: opts.names ?? [], ...(address !== undefined ? { address } : {}) };
  const findings = judgeForConsumers(chain, view);
  if (!keyMatches(leafPem, material.keyText, opts.newKey)) {
    findings.push({
      id: 'cert.key.mismatch',
      severity: 'error',
      message: `${opts.newKey} is not the key of ${opts.newCert}: the server could not use the pair.`,
      fix: 'Give the key the certificate was issued for.',
    });
  }
  return findings;
}

/**
 * The chain the depot serves after the switch, as read where this host reaches it, judged as the new
 * pair was before it: what the server sends may not be the file written (a chain file of its own, the
 * leaf alone), and no consumer is to validate a depot check rejects.
 */
export function judgeServedChain(served: ServedChain, newCaPem: string, reach: DepotReach, names: readonly string[] = []): Finding[] {
  const address = addressOf(reach.origin);
  return judgeForConsumers(served.chainPems, {
    newCaPem,
    depotHost: reach.serverName,
    names,
    protocol: served.protocol,
    ...(address !== undefined ? { address } : {}),
  });
}

/** The steps the move takes, as the dry run prints them. */
function steps(opts: CaMoveOptions, consumers: number, depot: URL, reach: DepotReach): string[] {
  const served = `serves the new certificate, read at ${reachText(reach)}`;
  const reload =
    opts.served.kind === 'serve'
      ? `send SIGHUP to serve (pid ${opts.served.pid}) and wait until it ${served}`
      : opts.served.reloadCommand
        ? `run "${opts.served.reloadCommand}" and wait until the server ${served}`
        : `reload the server yourself (${reloadHintText(reloadHints(opts.served))}), then run the move again`;
  const pointed = opts.repoint
    ? `point each consumer at ${depot.host}, whatever depot host its settings name`
    : `read each consumer's depot settings: one set to another host or port than ${depot.host} fails its row, and the move stops before the switch (\`repoint\` sets it)`;
  return [
    pointed,
    `import the new CA into each of ${consumers} consumers that lacks it, keeping the old one: with the depot settings (9.1.1 and later, the CA of the served certificate sent along), by the separate import before 9.1.1`,
    "list each consumer's trusted certificates and find the new CA in it by SHA-256",
    `write ${opts.served.certFile} and ${opts.served.keyFile} (the old pair kept until the rename), then ${reload}`,
    "judge the chain the depot then serves by check's verdict, as the new pair was judged: one check rejects stops the move before any consumer validates it",
    'have every consumer validate the depot again (the depot settings as the client sends them, with the new CA alone on 9.1.1 and later)',
    ...(opts.removeOld ? ['remove the old CA from every consumer, once every one validated the depot'] : []),
  ];
}

export function makePlan(material: CaMoveMaterial, opts: CaMoveOptions): CaMovePlan {
  if (!opts.depot.url) throw usageError('The move needs the depot URL the consumers use (`depotUrl`).');
  const url = consumersDepotUrl(opts);
  const reached = new URL(opts.depot.url).origin;
  const findings = judgeNewPair(material, opts, hostOf(url), addressOf(reached));
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0 && !opts.dryRun) {
    throw new DepotkitError(
      `The new certificate would fail validation: ${errors.map((f) => `${f.message} (${f.id})`).join(' ')}`,
      EXIT.problems,
      errors.find((f) => f.fix)?.fix,
    );
  }
  const where = { depotUrl: url.origin, ...(reached !== url.origin ? { reachedAt: reached } : {}) };
  return {
    ...where,
    newCa: summary(material.newCaPem),
    ...(material.oldCaPem ? { oldCa: summary(material.oldCaPem) } : {}),
    leaf: summary(oneCertificate(material.certText, opts.newCert)),
    findings,
    consumers: opts.consumers.map((c) => ({ name: c.name, url: c.url })),
    steps: steps(opts, opts.consumers.length, url, reachOf(where)),
    stateFile: opts.stateFile ?? join(dirname(opts.served.certFile), CA_MOVE_STATE_FILE),
  };
}
