import { createHash, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import pLimit from 'p-limit';
import { CHECK_ANONYMOUS_PATHS, DEPOT_PATHS, DEPOT_STATUS, INSTALLER_ERROR_CODES, INSTALLER_MESSAGES, UMDS_PATCH_STORE_DIR } from '../constants.js';
import { type CatalogBinary, CatalogError, catalogBinaries, parseCatalog } from '../depot/catalog.js';
import { checkHclContent } from '../depot/hcl.js';
import { lintServerCertificate, inspectCertificate, splitPemBlocks } from '../pki/index.js';
import { normaliseOpenPrefix } from '../server/paths.js';
import { DepotkitError, errorMessage } from '../util/errors.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { resolveAndConnect, tlsSnapshot } from './connect.js';
import { CHECK_DEFAULTS } from './defaults.js';
import { type CredentialTrust, type DepotClient, type HttpAnswer, basicAuth, contentLength, depotClient, fetchFile, probeStatus, streamFile } from './http.js';
import { type DepotUrl, depotFileUrl, parseDepotUrl } from './url.js';

export interface CheckOptions {
  /** PEM text of the CA certificates the installer trusts (its own store). */
  caPems?: string[];
  user?: string;
  password?: string;
  /** The host name the installer will use, when it differs from the URL's. */
  asHost?: string;
  /**
   * Send the credentials over plain HTTP (http:// URLs). Without it they are withheld there, as
   * they are from a server whose certificate fails the TLS checks.
   */
  allowHttpCredentials?: boolean;
  /**
   * More web-root-relative paths (a trailing slash: a folder) that should answer without
   * credentials; with `user`, they are asked for without credentials besides the known ones.
   */
  openPaths?: string[];
  deep?: boolean;
  concurrency?: number;
  timeoutMs?: number;
  now?: Date;
  onStart?: (totalBytes: number) => void;
  onBytes?: (n: number) => void;
}

export interface CheckResult {
  url: string;
  base: string;
  /** Would the installer accept this depot? */
  accepted: boolean;
  findings: Finding[];
  tls?: { protocol: string | null; cipher: string; subject: string; issuer: string; dnsNames: string[]; ipAddresses: string[]; sha256: string };
  stats: { binaries: number; checked: number; hashed: number; bytes: number };
}

const TLS_REJECTION = `the depot settings update fails with ${INSTALLER_ERROR_CODES.depotConnectFailure}: "${INSTALLER_MESSAGES.secureProtocolError}"`;

/** Checks a depot over the network exactly as the installer does, then goes further. */
export async function checkDepot(urlText: string, options: CheckOptions = {}): Promise<CheckResult> {
  const { url: depot, findings } = parseDepotUrl(urlText, options.asHost);
  const openPaths = (options.openPaths ?? []).map((p) => normaliseOpenPrefix(p, 'The open path') + (p.endsWith('/') ? '/' : ''));
  const timeoutMs = options.timeoutMs ?? CHECK_DEFAULTS.timeoutMs;
  const hostName = options.asHost ?? depot.host;
  const result: CheckResult = { url: urlText, base: depot.base.href, accepted: false, findings, stats: { binaries: 0, checked: 0, hashed: 0, bytes: 0 } };
  const finish = () => ({ ...result, accepted: !hasErrors(findings) });

  // 1. DNS and TCP.
  const connected = await resolveAndConnect(depot, timeoutMs);
  if (!connected.ok) {
    findings.push(connectFinding(depot, connected.reason, connected.detail));
    return finish();
  }

  // 2. TLS, judged only against the given CAs, as the installer's own store.
  let trust: CredentialTrust | undefined;
  let withheldBecause: string | undefined;
  if (depot.https) {
    let tlsStage: Finding[];
    let leaf: string;
    try {
      const snapshot = await tlsSnapshot(depot, connected.address, hostName, timeoutMs);
      const first = snapshot.chainPems[0];
      if (!first) throw new Error('the server sent no certificate');
      leaf = first;
      const info = inspectCertificate(leaf);
      result.tls = {
        protocol: snapshot.protocol,
        cipher: snapshot.cipher,
        subject: info.subject,
        issuer: info.issuer,
        dnsNames: info.san.dns,
        ipAddresses: info.san.ips,
        sha256: info.fingerprints.sha256,
      };
      tlsStage = [
        ...tlsFindings(snapshot.protocol, leaf, snapshot.chainPems.slice(1), snapshot.publicRoot, hostName, options),
        ...leafGivenAsCa(leaf, snapshot.chainPems.slice(1), hostName, options.caPems ?? []),
      ];
      findings.push(...tlsStage);
    } catch (err) {
      if (err instanceof DepotkitError) throw err;
      findings.push({
        id: 'tls.handshake-failed',
        severity: 'error',
        message: `The TLS handshake with ${depot.host}:${depot.port} failed: ${errorMessage(err)}.`,
        installer: TLS_REJECTION,
        fix: 'Check that the server speaks TLS 1.2 or 1.3 on this port (is it plain HTTP?).',
      });
      return finish();
    }
    // The password goes only to a server the installer would trust: anything else may be someone else's.
    const failed = [...new Set(tlsStage.filter((f) => f.severity === 'error').map((f) => f.id))];
    if (failed.length === 0) trust = { caPems: options.caPems ?? [], leafSha256: new X509Certificate(leaf).fingerprint256 };
    else withheldBecause = `the server's certificate failed the TLS checks (${failed.join(', ')}), so nothing says it is the depot`;
  } else {
    // A TLS port asked in plain HTTP hangs up (Node) or answers 400 (nginx): the URL is wrong, not the server.
    if (
      await tlsSnapshot(depot, connected.address, hostName, timeoutMs).then(
        () => true,
        () => false,
      )
    ) {
      const https = new URL(depot.base.href);
      https.protocol = 'https:';
      findings.push({
        id: 'http.tls-port',
        severity: 'error',
        message: `${depot.host}:${depot.port} speaks TLS: use https://.`,
        installer: `reports ${DEPOT_STATUS.notAvailable} when given http:// for this port`,
        fix: `Give the depot as ${https.href.replace(/\/$/, '')}, here and to the installer.`,
      });
      return finish();
    }
    findings.push({
      id: 'http.plain',
      severity: 'warning',
      message: 'The depot is served over plain HTTP.',
      installer: 'accepts it only through the 9.1 API (the depot settings `url` field); the UI and 9.0 need HTTPS',
      fix: 'Serve it over HTTPS: depotkit serve <dir> --ca <ca-dir>.',
    });
    if (options.user !== undefined && options.allowHttpCredentials) {
      trust = 'plain-http';
      findings.push({
        id: 'auth.cleartext',
        severity: 'warning',
        message: 'The Basic credentials crossed the network in clear text over HTTP (--allow-http-credentials).',
        fix: 'Use HTTPS when the depot needs a password.',
      });
    } else {
      withheldBecause = 'the depot is served over plain HTTP, where Basic credentials cross the network in clear text';
    }
  }
  const withheld = options.user !== undefined && trust === undefined;
  if (withheld) {
    findings.push({
      id: 'auth.withheld',
      severity: 'warning',
      message: `The password of user "${options.user}" was not sent: ${withheldBecause}. Only what answers without credentials was checked.`,
      fix: depot.https
        ? "Fix the TLS findings (pass --ca with the CA that issued the depot's certificate, and --as-host with the name the installer uses); the check then sends the credentials."
        : 'Serve the depot over HTTPS (depotkit serve <dir> --ca <ca-dir>); to send the password over HTTP anyway, pass --allow-http-credentials.',
    });
  }

  const client = depotClient(depot, hostName, Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency), withheld ? undefined : trust);
  const auth: Credentials = {
    user: options.user,
    header: options.user !== undefined && !withheld ? basicAuth(options.user, options.password ?? '') : undefined,
    withheld,
  };
  try {
    await checkContent(client, depot, options, auth, result);
    if (auth.header !== undefined) await checkAnonymousPaths(client, depot, auth.header, openPaths, findings);
  } finally {
    client.close();
  }
  return finish();
}

/** The depot user, the Authorization header the check sends (none when withheld or not given), and whether it was withheld. */
interface Credentials {
  user: string | undefined;
  header: string | undefined;
  withheld: boolean;
}

function connectFinding(depot: DepotUrl, reason: string, detail: string): Finding {
  const where = `${depot.host}:${depot.port}`;
  switch (reason) {
    case 'unknown-host':
      return {
        id: 'net.unknown-host',
        severity: 'error',
        message: `${depot.host} does not resolve (${detail}).`,
        installer: `reports ${DEPOT_STATUS.unknownHost}`,
        fix: `Add ${depot.host} to DNS or to the installer's /etc/hosts, or use the name that resolves. When only the installer resolves it, check by address with --as-host ${depot.host} (the URL with the depot's IP; TLS names are then checked against ${depot.host}).`,
      };
    case 'refused':
      return {
        id: 'net.refused',
        severity: 'error',
        message: `${where} refused the connection: nothing listens there.`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Start the server (depotkit serve) or fix the port in the URL.',
      };
    case 'timeout':
      return {
        id: 'net.timeout',
        severity: 'error',
        message: `${where} did not answer (${detail}).`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Check firewalls between the installer and the depot, and the address.',
      };
    default:
      return {
        id: 'net.unreachable',
        severity: 'error',
        message: `${where} cannot be reached: ${detail}.`,
        installer: `reports ${DEPOT_STATUS.notAvailable}`,
        fix: 'Check the address and the routes.',
      };
  }
}

function tlsFindings(protocol: string | null, leaf: string, intermediates: string[], publicRoot: boolean, hostName: string, options: CheckOptions): Finding[] {
  const findings: Finding[] = [];
  if (protocol !== 'TLSv1.2' && protocol !== 'TLSv1.3') {
    findings.push({
      id: 'tls.version',
      severity: 'error',
      message: `The server negotiated ${protocol}; the installer speaks TLS 1.2 and 1.3 only.`,
      installer: TLS_REJECTION,
      fix: 'Enable TLS 1.2 or 1.3 on the server.',
    });
  }
  const lint = lintServerCertificate(leaf, {
    host: hostName,
    caPems: options.caPems?.length ? options.caPems : undefined,
    chainPems: intermediates,
    now: options.now,
  });
  // In a check the consequence is always the depot update's error, keyed on its code.
  for (const f of lint) findings.push(f.severity === 'error' ? { ...f, installer: TLS_REJECTION } : f);
  if (!options.caPems?.length) {
    const top = inspectCertificate(intermediates.at(-1) ?? leaf);
    findings.push({
      id: 'tls.ca.not-given',
      severity: 'error',
      message: `No --ca given: the installer trusts only CAs imported into its own store, so this check cannot say it would. The certificate was issued by "${top.issuer}"${publicRoot ? ' and chains to a public root' : ', which is not a public root'}.`,
      evidence: { issuer: top.issuer, topCertificateSha256: top.fingerprints.sha256, chainsToPublicRoot: publicRoot },
      installer: `${TLS_REJECTION}, unless that CA is in its store`,
      fix: 'Pass --ca with the CA certificate that you import into the installer (depotkit installer trust --ca FILE).',
    });
  }
  return findings;
}

/**
 * A certificate passed as a CA that is not one (no basicConstraints CA:TRUE), typically the depot's
 * own certificate, as fetched with openssl s_client. The installer's Java PKIX, like the lint, trusts
 * a server whose own certificate is in its store, so it works until that certificate is re-issued.
 */
function leafGivenAsCa(leaf: string, chain: string[], hostName: string, caPems: string[]): Finding[] {
  const served = inspectCertificate(leaf);
  const findings: Finding[] = [];
  for (const pem of caPems.flatMap((p) => splitPemBlocks(p, 'CERTIFICATE'))) {
    const given = inspectCertificate(pem, 'A CA certificate');
    if (given.isCa) continue;
    const isServed = given.fingerprints.sha256 === served.fingerprints.sha256;
    const evidence = { subject: given.subject, issuer: given.issuer, sha256: given.fingerprints.sha256, servedCertificate: isServed };
    if (!isServed) {
      findings.push({
        id: 'tls.ca.leaf',
        severity: 'warning',
        message: `The certificate given as CA (${given.subject}) is not a CA (no basicConstraints CA:TRUE), and not the one the depot serves: it vouches for nothing here.`,
        evidence,
        fix: `Pass --ca with the certificate of the CA that issued the depot's certificate ("${served.issuer}"); depotkit cert inspect <server-chain.pem> --ca <ca-cert.pem> shows whether a CA file is the right one.`,
      });
      continue;
    }
    const names = isIP(hostName) ? `--dns <depot FQDN> --ip ${hostName}` : `--dns ${hostName}`;
    const fix = served.selfSigned
      ? `The depot's certificate is self-signed, so nothing can vouch for the next one: make a CA, issue the depot's certificate from it, serve that, and import the CA once: depotkit cert ca --out <ca-dir>; depotkit cert issue --ca <ca-dir> ${names} --out <out-dir>; depotkit installer trust --ca <ca-dir>/ca-cert.pem (and check with --ca <ca-dir>/ca-cert.pem).`
      : `Pass --ca with the certificate of the CA that issued it ("${served.issuer}")${chain.length > 0 ? ', which the server sends after its own certificate' : ''}, and import that one into the installer: depotkit installer trust --ca <ca-cert.pem>. For a certificate from depotkit cert issue it is <ca-dir>/ca-cert.pem; depotkit cert inspect <server-chain.pem> --ca <ca-cert.pem> confirms it.`;
    findings.push({
      id: 'tls.ca.leaf',
      severity: 'warning',
      message: `The certificate given as CA (${given.subject}) is not a CA (no basicConstraints CA:TRUE): it is the depot's own certificate. It works while exactly this certificate is served, and stops working when the depot's certificate is renewed or re-issued.`,
      evidence,
      installer: `accepts the depot today (its Java trust manager, like this check, trusts a server whose own certificate is in its store); after the next re-issue ${TLS_REJECTION}`,
      fix,
    });
  }
  return findings;
}

async function checkContent(agent: DepotClient, depot: DepotUrl, options: CheckOptions, credentials: Credentials, result: CheckResult): Promise<void> {
  const { findings } = result;
  const auth = credentials.header;
  const at = (path: string) => depotFileUrl(depot, path);
  const catalogUrl = at(DEPOT_PATHS.catalog);

  const request = failuresAsFindings(agent, findings);

  // 3. HEAD of the catalog, with the credentials, as the installer's first request.
  const head = await request(catalogUrl, 'HEAD', auth, 'catalog', DEPOT_PATHS.catalog);
  if (!head) return;
  const anonymousHead = auth ? await request(catalogUrl, 'HEAD', undefined, 'catalog', DEPOT_PATHS.catalog) : head;
  const anonymousGet = anonymousHead?.status === 200 ? await request(catalogUrl, 'GET', undefined, 'catalog', DEPOT_PATHS.catalog) : undefined;
  if (anonymousHead?.status === 200 && anonymousGet?.status === 401) {
    findings.push({
      id: 'auth.head-unauthenticated',
      severity: 'warning',
      path: DEPOT_PATHS.catalog,
      message: 'The server answers HEAD without credentials while GET needs them.',
      installer: 'passes its HEAD here, but other tools and proxies differ: HEAD must be authenticated exactly like GET',
      fix: 'Serve the depot with depotkit serve, or protect HEAD like GET in the web server configuration.',
    });
  }
  if (head.status !== 200) {
    findings.push(statusFinding('catalog', DEPOT_PATHS.catalog, 'HEAD', head.status, credentials));
    return;
  }
  const headLength = contentLength(head);
  if (headLength === undefined) {
    findings.push({
      id: 'catalog.head.no-length',
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: 'HEAD of the catalog has no Content-Length.',
      fix: 'Serve the depot with a server that answers HEAD like GET (depotkit serve).',
    });
  }

  // 4. GET of the catalog, its signature, the manifest, the HCL and Compatibility data.
  const get = await request(catalogUrl, 'GET', auth, 'catalog', DEPOT_PATHS.catalog);
  if (!get) return;
  if (get.status !== 200 || !get.body) {
    findings.push(statusFinding('catalog', DEPOT_PATHS.catalog, 'GET', get.status, credentials));
    return;
  }
  if (headLength !== undefined && headLength !== get.body.length) {
    findings.push({
      id: 'catalog.length-mismatch',
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: `HEAD says ${headLength} bytes but GET returned ${get.body.length}.`,
      evidence: { head: headLength, get: get.body.length },
      fix: 'Serve HEAD and GET from the same file (depotkit serve).',
    });
  }
  let binaries: CatalogBinary[] = [];
  try {
    binaries = catalogBinaries(parseCatalog(get.body.toString('utf8')));
  } catch (err) {
    if (!(err instanceof CatalogError)) throw err;
    findings.push({
      id: `catalog.${err.kind}.invalid`,
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: err.message,
      installer: 'cannot read the catalog and refuses the depot',
      fix: 'Copy the catalog again from the vendor metadata (depotkit depot build).',
    });
  }

  const sig = await request(at(DEPOT_PATHS.catalogSig), 'GET', auth, 'catalog.sig', DEPOT_PATHS.catalogSig);
  if (sig && sig.status !== 200) findings.push(statusFinding('catalog.sig', DEPOT_PATHS.catalogSig, 'GET', sig.status, credentials));
  const getJson = async (path: string, idPrefix: string): Promise<unknown> => {
    const answer = await request(at(path), 'GET', auth, idPrefix, path);
    if (!answer) return undefined;
    if (answer.status !== 200 || !answer.body) {
      findings.push(statusFinding(idPrefix, path, 'GET', answer.status, credentials));
      return undefined;
    }
    try {
      return JSON.parse(answer.body.toString('utf8'));
    } catch (err) {
      findings.push({
        id: `${idPrefix}.json.invalid`,
        severity: 'error',
        path,
        message: `${path} is not valid JSON: ${errorMessage(err)}.`,
        fix: 'Copy it again from the vendor metadata.',
      });
      return undefined;
    }
  };
  await getJson(DEPOT_PATHS.manifest, 'manifest');
  await getJson(DEPOT_PATHS.compatibility, 'compatibility');
  const all = await getJson(DEPOT_PATHS.hclAll, 'hcl');
  const last = await getJson(DEPOT_PATHS.hclLastUpdated, 'hcl');
  findings.push(...checkHclContent(all, last, options.now ?? new Date()));

  // 5. Every binary the catalog names: present, with the catalog's size; --deep: its SHA-256.
  await checkBinaries(agent, depot, binaries, credentials, options, result);
}

/**
 * The check's requests: a network failure (reset, timeout, cut answer) becomes
 * a `<prefix>.failed` finding and `undefined`, so one bad answer never ends the check.
 */
function failuresAsFindings(client: DepotClient, findings: Finding[]) {
  return async (url: string, method: 'HEAD' | 'GET', auth: string | undefined, idPrefix: string, path: string): Promise<HttpAnswer | undefined> => {
    try {
      return await fetchFile(client, url, method, auth);
    } catch (err) {
      findings.push(requestFailed(idPrefix, path, method, err));
      return undefined;
    }
  };
}

function requestFailed(idPrefix: string, path: string, method: string, err: unknown): Finding {
  return {
    id: `${idPrefix}.failed`,
    severity: 'error',
    path,
    message: `${method} ${path} failed: ${errorMessage(err)}.`,
    installer: `reports ${DEPOT_STATUS.notAvailable} or fails the download`,
    fix: "Look at the web server's error log: an answer cut short often means a file it cannot read, or a proxy timeout.",
  };
}

/** What a status other than 200 means; the credentials tell a refused password from a missing or withheld one. */
function statusFinding(idPrefix: string, path: string, method: string, status: number, credentials: Credentials): Finding {
  const user = credentials.user;
  if (status === 401) {
    if (credentials.withheld) {
      return {
        id: 'auth.unchecked',
        severity: 'error',
        path,
        message: `${method} ${path}: the depot asks for credentials (401), which were withheld (auth.withheld): neither they nor what they protect could be checked.`,
      };
    }
    if (user === undefined) {
      return {
        id: 'auth.required',
        severity: 'error',
        path,
        message: `${method} ${path}: the depot needs credentials (401) and none were given.`,
        installer: `reports ${DEPOT_STATUS.userNotSet} or ${INSTALLER_ERROR_CODES.depotInvalidCredential} unless offlineAccount holds them`,
        fix: "Pass --user and --password-file; configure the same in the installer's offlineAccount.",
      };
    }
    return {
      id: 'auth.rejected',
      severity: 'error',
      path,
      message: `${method} ${path}: the depot refused the credentials of user "${user}" (401).`,
      installer: `reports ${INSTALLER_ERROR_CODES.depotInvalidCredential}`,
      fix: 'Check the user and password (one account must open all of PROD/); give them to the installer in offlineAccount.',
    };
  }
  if (status === 404) {
    return {
      id: `${idPrefix}.missing`,
      severity: 'error',
      path,
      message: `${method} ${path}: 404, the file is not there.`,
      installer: idPrefix === 'catalog' ? 'cannot read the catalog and refuses the depot' : 'fails when it needs this file',
      fix: 'Lay out the metadata with depotkit depot build; check that the URL points at the folder that contains PROD/.',
    };
  }
  if (status === 403) {
    return {
      id: `${idPrefix}.forbidden`,
      severity: 'error',
      path,
      message: `${method} ${path}: 403, the server may not read the file.`,
      fix: 'Make the depot files readable by the web server (chmod -R a+rX).',
    };
  }
  return { id: `${idPrefix}.status`, severity: 'error', path, message: `${method} ${path} answered ${status}.`, evidence: { status } };
}

async function checkBinaries(
  agent: DepotClient,
  depot: DepotUrl,
  binaries: CatalogBinary[],
  credentials: Credentials,
  options: CheckOptions,
  result: CheckResult,
): Promise<void> {
  const { stats } = result;
  const auth = credentials.header;
  // Collected apart and sorted, so concurrent requests still give a stable report.
  const findings: Finding[] = [];
  stats.binaries = binaries.length;
  const limit = pLimit(Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency));
  const present: CatalogBinary[] = [];
  await Promise.all(
    binaries.map((binary) =>
      limit(async () => {
        let head;
        try {
          head = await fetchFile(agent, depotFileUrl(depot, binary.path), 'HEAD', auth);
        } catch (err) {
          findings.push(requestFailed('binary', binary.path, 'HEAD', err));
          return;
        }
        stats.checked++;
        if (head.status !== 200) {
          const f = statusFinding('binary', binary.path, 'HEAD', head.status, credentials);
          findings.push({
            ...f,
            installer: `fails the ${binary.component} download`,
            fix: f.id === 'binary.missing' ? `Place ${binary.fileName} at ${binary.path} (depotkit depot build --binaries <folder>).` : f.fix,
          });
          return;
        }
        const length = contentLength(head);
        if (length !== binary.size) {
          findings.push({
            id: 'binary.size-mismatch',
            severity: 'error',
            path: binary.path,
            message: `${binary.path} is served with ${length ?? 'no'} Content-Length; the catalog says ${binary.size} bytes.`,
            evidence: { served: length, expected: binary.size },
            installer: `fails the ${binary.component} download's size check`,
            fix: 'Download the file again and place it with depotkit depot build.',
          });
          return;
        }
        present.push(binary);
      }),
    ),
  );
  stats.bytes = present.reduce((sum, b) => sum + b.size, 0);
  const report = () => {
    result.findings.push(...findings.sort((a, b) => (a.path ?? '').localeCompare(b.path ?? '')));
  };
  if (!options.deep) return report();
  options.onStart?.(stats.bytes);
  const hashLimit = pLimit(Math.max(1, Math.min(CHECK_DEFAULTS.hashConcurrency, options.concurrency ?? CHECK_DEFAULTS.hashConcurrency)));
  await Promise.all(
    present.map((binary) =>
      hashLimit(async () => {
        const hash = createHash('sha256');
        let answer: { status: number; bytes: number };
        try {
          answer = await streamFile(agent, depotFileUrl(depot, binary.path), auth, binary.size, (chunk) => {
            hash.update(chunk);
            options.onBytes?.(chunk.length);
          });
        } catch (err) {
          findings.push(requestFailed('binary', binary.path, 'GET', err));
          return;
        }
        if (answer.status !== 200) {
          findings.push(statusFinding('binary', binary.path, 'GET', answer.status, credentials));
          return;
        }
        if (answer.bytes > binary.size) {
          findings.push({
            id: 'binary.size-mismatch',
            severity: 'error',
            path: binary.path,
            message: `GET ${binary.path} sent more than the catalog's ${binary.size} bytes; the check stopped reading one byte past them.`,
            evidence: { served: `more than ${binary.size}`, expected: binary.size },
            installer: `fails the ${binary.component} download's size check`,
            fix: 'Serve HEAD and GET from the same file (depotkit serve); download the file again and place it with depotkit depot build.',
          });
          return;
        }
        stats.hashed++;
        const actual = hash.digest('hex');
        if (actual !== binary.checksum) {
          findings.push({
            id: 'binary.checksum-mismatch',
            severity: 'error',
            path: binary.path,
            message: `${binary.path} is served with the wrong content (SHA-256 ${actual}, the catalog says ${binary.checksum}).`,
            evidence: { actual, expected: binary.checksum },
            installer: `fails the ${binary.component} checksum check after the download`,
            fix: 'Download the file again; depotkit depot build checks it before placing it.',
          });
        }
      }),
    ),
  );
  report();
}

/**
 * With credentials given, asks for the paths that clients read without credentials (the known
 * ones and `openPaths`) without them, and says which answer: the vendor's update tool cannot
 * do Basic auth, and upgrades from 5.x read the patch store on the depot.
 */
async function checkAnonymousPaths(client: DepotClient, depot: DepotUrl, auth: string, openPaths: string[], findings: Finding[]): Promise<void> {
  const known: string[] = [CHECK_ANONYMOUS_PATHS.hcl, CHECK_ANONYMOUS_PATHS.patchStore];
  for (const path of [...new Set([...known, ...openPaths])]) {
    const named = openPaths.includes(path) && !known.includes(path);
    let status: number;
    try {
      status = (await probeStatus(client, depotFileUrl(depot, path), 'GET')).status;
    } catch (err) {
      findings.push({ id: 'open.failed', severity: 'info', path, message: `GET ${path} without credentials failed: ${errorMessage(err)}.` });
      continue;
    }
    const folder = path.endsWith('/');
    // A server that protects a path asks for credentials whether or not anything is there; a folder that
    // is open is answered without being listed (403 from nginx and Apache, 404 from depotkit serve).
    if (status === 200 || (folder && (status === 403 || status === 404))) {
      findings.push({
        id: 'open.anonymous',
        severity: 'info',
        path,
        message:
          status === 200
            ? `${path} answers without credentials (200).`
            : `${path} answers without asking for credentials (${status}: the folder itself is not listed).`,
        evidence: { status },
      });
      continue;
    }
    if (status === 401 && path === CHECK_ANONYMOUS_PATHS.patchStore) {
      // Only a server that shows the folder to the depot user says it is there (a listing, or 403 for no listing).
      let withAuth: number | undefined;
      try {
        withAuth = (await probeStatus(client, depotFileUrl(depot, path), 'GET', auth)).status;
      } catch {
        withAuth = undefined;
      }
      const present = withAuth === 200 || withAuth === 403;
      findings.push({
        id: 'open.patch-store.auth-required',
        severity: present ? 'warning' : 'info',
        path,
        message: present
          ? `${path} is there but asks for credentials (401): the update tool cannot send them, so upgrades from 5.x that read it fail.`
          : `${path} asks for credentials (401): if this depot is to serve upgrades from 5.x, the update tool reads it without credentials and fails.`,
        evidence: { status, statusWithCredentials: withAuth },
        fix: `Leave it open: depotkit serve <dir> --open ${UMDS_PATCH_STORE_DIR} (or switch auth off for that location in the web server).`,
      });
      continue;
    }
    if (named) {
      findings.push(
        status === 401
          ? {
              id: 'open.path.auth-required',
              severity: 'warning',
              path,
              message: `${path} asks for credentials (401), though named as open.`,
              evidence: { status },
              fix: `Leave it open: depotkit serve <dir> --open ${path.replace(/\/$/, '')} (or switch auth off for that location in the web server).`,
            }
          : {
              id: 'open.path.status',
              severity: 'warning',
              path,
              message: `${path} answers ${status} without credentials${status === 403 || status === 404 ? ' (a folder? name it with a trailing /)' : ''}.`,
              evidence: { status },
            },
      );
    }
  }
}
