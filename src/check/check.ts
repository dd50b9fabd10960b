import { catalogEntriesOf } from '../depot/catalog-entries.js';
import type { Catalog } from '../depot/catalog.js';
import type { ManifestRelease } from '../depot/manifest-releases.js';
import { judgeWithFindings } from '../depot/release-findings.js';
import { type DepotSelection, type SelectOptions, checkChoice, releaseBoms, selectionOf, selects } from '../depot/selection.js';
import type { ReleaseJudgement, ReleaseVerdict, SeenFile } from '../depot/release-status.js';
import { normaliseOpenPrefix } from '../server/paths.js';
import { type Finding, hasErrors } from '../util/findings.js';
import { failuresAsFindings } from './answers.js';
import { type BinaryOptions, type BinaryStats, checkBinaries } from './binaries.js';
import { resolveAndConnect } from './connect.js';
import { checkMetadata, readCatalog } from './content.js';
import { type Target, credentialsFor } from './credentials.js';
import { CHECK_DEFAULTS } from './defaults.js';
import { depotClient } from './http.js';
import { recordedSelection } from './recorded-selection.js';
import { connectFinding } from './network.js';
import { checkAnonymousPaths } from './open-paths.js';
import { plainHttpStage } from './plain-http.js';
import { type TlsSummary, tlsStage } from './tls.js';
import { parseDepotUrl } from '../util/depot-url.js';

export interface CheckOptions extends BinaryOptions {
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
  /**
   * The selection the depot was cut to (a selective mirror or unpack records it, and serve's status page prints it
   * in its check command line): a binary it left out is said, not an error; one it chose and the depot lacks is.
   */
  selection?: SelectOptions;
  timeoutMs?: number;
  now?: Date;
}

export interface CheckResult {
  url: string;
  base: string;
  /** Would the installer accept this depot? */
  accepted: boolean;
  findings: Finding[];
  tls?: TlsSummary;
  stats: BinaryStats;
  /** How the releases were told apart: by the manifest's releases, else by the catalog's product versions. */
  grouping?: ReleaseJudgement['grouping'];
  /**
   * What each release holds as served, in version order (none when the catalog could not be read): from each
   * binary's HEAD (its Content-Length), and with `deep` its SHA-256.
   */
  releases: ReleaseVerdict[];
  /** The selection the depot was judged on (`selection`, or the one the depot records), in words. */
  selection?: string;
  /** The selection was the one the depot records (serve's status JSON), no `selection` being given. */
  selectionRecorded?: boolean;
}

/** The selection given, checked against the catalog served (an unknown release or component is refused). */
function selectionFor(options: SelectOptions | undefined, catalog: Catalog, manifest: ManifestRelease[] | undefined): DepotSelection | undefined {
  if (!selects(options)) return undefined;
  const entries = catalogEntriesOf(catalog);
  return selectionOf([checkChoice(options, entries, releaseBoms(entries, manifest))], entries, manifest);
}

/**
 * Checks a depot over the network exactly as the installer does, then goes further: DNS and TCP,
 * TLS (or plain HTTP), the credentials it may send, the catalog and metadata, every binary, and
 * with credentials the paths that must answer without them.
 */
export async function checkDepot(urlText: string, options: CheckOptions = {}): Promise<CheckResult> {
  const { url: depot, findings } = parseDepotUrl(urlText, options.asHost);
  const openPaths = (options.openPaths ?? []).map((p) => normaliseOpenPrefix(p, 'The open path') + (p.endsWith('/') ? '/' : ''));
  const timeoutMs = options.timeoutMs ?? CHECK_DEFAULTS.timeoutMs;
  const hostName = options.asHost ?? depot.host;
  const result: CheckResult = {
    url: urlText,
    base: depot.base.href,
    accepted: false,
    findings,
    stats: { binaries: 0, checked: 0, hashed: 0, bytes: 0 },
    releases: [],
  };
  const finish = () => ({ ...result, accepted: !hasErrors(findings) });

  const connected = await resolveAndConnect(depot, timeoutMs);
  if (!connected.ok) {
    findings.push(connectFinding(depot, connected));
    return finish();
  }
  const target: Target = { depot, address: connected.address, hostName, timeoutMs, connection: connected.socket };
  const stage = depot.https
    ? await tlsStage(target, options, findings, (tls) => (result.tls = tls))
    : await plainHttpStage(target, options.user, options.allowHttpCredentials ?? false, findings);
  if (stage.stop) return finish();
  const credentials = credentialsFor(depot, options.user, options.password, stage, findings);

  const client = depotClient(depot, hostName, Math.max(1, options.concurrency ?? CHECK_DEFAULTS.concurrency), stage.trust);
  try {
    const ctx = { request: failuresAsFindings(client, findings), depot, credentials, findings };
    const read = await readCatalog(ctx);
    if (read) {
      const manifest = await checkMetadata(ctx, options.now ?? new Date());
      const seen = new Map<string, SeenFile>();
      const binaryFindings = await checkBinaries(client, depot, read.binaries, credentials, options, result.stats, seen);
      if (read.catalog) {
        // A cut depot served by depotkit serve says what it was cut to; flags given say it first.
        const cut = !selects(options.selection) && binaryFindings.some((f) => f.id === 'binary.missing');
        const recorded = cut ? await recordedSelection(client, depot, credentials.header) : undefined;
        const selection = recorded ? selectionOf(recorded, catalogEntriesOf(read.catalog), manifest) : selectionFor(options.selection, read.catalog, manifest);
        if (recorded && selection) result.selectionRecorded = true;
        const { judgement, findings: judged } = judgeWithFindings(read.catalog, manifest, seen, binaryFindings, selection);
        findings.push(...judged);
        Object.assign(result, { grouping: judgement.grouping, releases: judgement.releases, ...(selection ? { selection: selection.words } : {}) });
      } else findings.push(...binaryFindings);
    }
    if (credentials.header !== undefined) await checkAnonymousPaths(client, depot, credentials.header, openPaths, findings);
  } finally {
    client.close();
  }
  return finish();
}
