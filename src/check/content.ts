import { DEPOT_PATHS } from '../constants.js';
import { type Catalog, type CatalogBinary, CatalogError, catalogBinaries, parseCatalog } from '../depot/catalog.js';
import { checkHclContent } from '../depot/hcl.js';
import { type ManifestRelease, readManifestReleases } from '../depot/manifest-releases.js';
import { errorMessage } from '../util/errors.js';
import type { Finding } from '../util/findings.js';
import { type CheckRequest, type Credentials, statusFinding } from './answers.js';
import { contentLength } from './http.js';
import { type DepotUrl, depotFileUrl } from '../util/depot-url.js';

/** What the content phases share: how to ask, where, as whom, and where the findings go. */
interface ContentContext {
  request: CheckRequest;
  depot: DepotUrl;
  credentials: Credentials;
  findings: Finding[];
}

/**
 * The catalog as the installer reads it: HEAD with the credentials first, then GET; the
 * binaries it names (none when it cannot be used) and the catalog itself, or `undefined`
 * when it could not be read at all.
 */
export async function readCatalog(ctx: ContentContext): Promise<{ binaries: CatalogBinary[]; catalog?: Catalog } | undefined> {
  const head = await catalogHead(ctx);
  if (!head) return undefined;
  const body = await catalogGet(ctx, head.length);
  if (!body) return undefined;
  try {
    const catalog = parseCatalog(body.toString('utf8'));
    return { binaries: catalogBinaries(catalog), catalog };
  } catch (err) {
    if (!(err instanceof CatalogError)) throw err;
    ctx.findings.push({
      id: `catalog.${err.kind}.invalid`,
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: err.message,
      installer: 'cannot read the catalog and refuses the depot',
      fix: 'Copy the catalog again from the vendor metadata (`buildDepot`).',
    });
    return { binaries: [] };
  }
}

/** HEAD of the catalog, with the credentials, as the installer's first request; its length when it answers 200. */
async function catalogHead({ request, depot, credentials, findings }: ContentContext): Promise<{ length: number | undefined } | undefined> {
  const auth = credentials.header;
  const url = depotFileUrl(depot, DEPOT_PATHS.catalog);
  const head = await request(url, 'HEAD', auth, 'catalog', DEPOT_PATHS.catalog);
  if (!head) return undefined;
  const anonymousHead = auth ? await request(url, 'HEAD', undefined, 'catalog', DEPOT_PATHS.catalog) : head;
  const anonymousGet = anonymousHead?.status === 200 ? await request(url, 'GET', undefined, 'catalog', DEPOT_PATHS.catalog) : undefined;
  if (anonymousHead?.status === 200 && anonymousGet?.status === 401) {
    findings.push({
      id: 'auth.head-unauthenticated',
      severity: 'warning',
      path: DEPOT_PATHS.catalog,
      message: 'The server answers HEAD without credentials while GET needs them.',
      installer: 'passes its HEAD here, but other tools and proxies differ: HEAD must be authenticated exactly like GET',
      fix: 'Serve the depot with `serveDepot`, or protect HEAD like GET in the web server configuration.',
    });
  }
  if (head.status !== 200) {
    findings.push(statusFinding('catalog', DEPOT_PATHS.catalog, 'HEAD', head.status, credentials));
    return undefined;
  }
  const length = contentLength(head);
  if (length === undefined) {
    findings.push({
      id: 'catalog.head.no-length',
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: 'HEAD of the catalog has no Content-Length.',
      fix: 'Serve the depot with a server that answers HEAD like GET (`serveDepot`).',
    });
  }
  return { length };
}

/** GET of the catalog: its body, which must be as long as HEAD said. */
async function catalogGet({ request, depot, credentials, findings }: ContentContext, headLength: number | undefined): Promise<Buffer | undefined> {
  const get = await request(depotFileUrl(depot, DEPOT_PATHS.catalog), 'GET', credentials.header, 'catalog', DEPOT_PATHS.catalog);
  if (!get) return undefined;
  if (get.status !== 200 || !get.body) {
    findings.push(statusFinding('catalog', DEPOT_PATHS.catalog, 'GET', get.status, credentials));
    return undefined;
  }
  if (headLength !== undefined && headLength !== get.body.length) {
    findings.push({
      id: 'catalog.length-mismatch',
      severity: 'error',
      path: DEPOT_PATHS.catalog,
      message: `HEAD says ${headLength} bytes but GET returned ${get.body.length}.`,
      evidence: { head: headLength, get: get.body.length },
      fix: 'Serve HEAD and GET from the same file (`serveDepot`).',
    });
  }
  return get.body;
}

/**
 * The catalog's signature, the manifest, the Compatibility data and the HCL, which must be there and be JSON.
 * Returns the manifest's releases, when it lists them in the shape they are read in.
 */
export async function checkMetadata(ctx: ContentContext, now: Date): Promise<ManifestRelease[] | undefined> {
  const { request, depot, credentials, findings } = ctx;
  const sig = await request(depotFileUrl(depot, DEPOT_PATHS.catalogSig), 'GET', credentials.header, 'catalog.sig', DEPOT_PATHS.catalogSig);
  if (sig && sig.status !== 200) findings.push(statusFinding('catalog.sig', DEPOT_PATHS.catalogSig, 'GET', sig.status, credentials));
  const manifest = await getJson(ctx, DEPOT_PATHS.manifest, 'manifest');
  await getJson(ctx, DEPOT_PATHS.compatibility, 'compatibility');
  const all = await getJson(ctx, DEPOT_PATHS.hclAll, 'hcl');
  const last = await getJson(ctx, DEPOT_PATHS.hclLastUpdated, 'hcl');
  findings.push(...checkHclContent(all?.value, last?.value, now));
  const releases = manifest === undefined ? undefined : readManifestReleases(manifest.text);
  return typeof releases === 'string' ? undefined : releases;
}

/** A JSON file of the depot, parsed, with its text; `undefined` (and a finding) when it is not there or not JSON. */
async function getJson(
  { request, depot, credentials, findings }: ContentContext,
  path: string,
  idPrefix: string,
): Promise<{ value: unknown; text: string } | undefined> {
  const answer = await request(depotFileUrl(depot, path), 'GET', credentials.header, idPrefix, path);
  if (!answer) return undefined;
  if (answer.status !== 200 || !answer.body) {
    findings.push(statusFinding(idPrefix, path, 'GET', answer.status, credentials));
    return undefined;
  }
  const text = answer.body.toString('utf8');
  try {
    return { value: JSON.parse(text) as unknown, text };
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
}
