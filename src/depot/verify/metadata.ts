import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import type { Finding } from '../../util/findings.js';
import { type Catalog, CatalogError, parseCatalog } from '../catalog.js';
import { checkHclContent } from '../hcl.js';

async function readJson(root: string, path: string, findings: Finding[], idPrefix: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(join(root, path), 'utf8');
  } catch {
    return undefined; // reported as a missing file already
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    findings.push({
      id: `${idPrefix}.json.invalid`,
      severity: 'error',
      path,
      message: `${path} is not valid JSON: ${(err as Error).message}.`,
      fix: 'Copy it again from the vendor metadata.',
    });
    return undefined;
  }
}

/** The catalog, judged whole (a finding when it cannot be used), and its bytes for the signature. */
export async function readCatalog(root: string, findings: Finding[]): Promise<{ catalog?: Catalog; bytes?: Buffer }> {
  let bytes: Buffer | undefined;
  try {
    bytes = await readFile(join(root, DEPOT_PATHS.catalog));
    return { catalog: parseCatalog(bytes.toString('utf8'), DEPOT_PATHS.catalog), bytes };
  } catch (err) {
    if (err instanceof CatalogError) {
      findings.push({ id: `catalog.${err.kind}.invalid`, severity: 'error', path: DEPOT_PATHS.catalog, message: err.message, fix: err.fix });
    }
    return bytes ? { bytes } : {};
  }
}

/** The manifest and the compatibility data as JSON, and the vSAN HCL's content and age. */
export async function checkMetadata(root: string, findings: Finding[], now: Date): Promise<void> {
  await readJson(root, DEPOT_PATHS.manifest, findings, 'manifest');
  await readJson(root, DEPOT_PATHS.compatibility, findings, 'compatibility');
  const all = await readJson(root, DEPOT_PATHS.hclAll, findings, 'hcl');
  const last = await readJson(root, DEPOT_PATHS.hclLastUpdated, findings, 'hcl');
  findings.push(...checkHclContent(all, last, now));
}
