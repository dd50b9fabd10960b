import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEPOT_PATHS } from '../../constants.js';
import type { Finding } from '../../util/findings.js';
import { parseSignatureFile, verifyCatalogSignature } from '../signature.js';

const path = DEPOT_PATHS.catalogSig;

/** What the catalog's signature says: the vendor's (kept, not checked), or depotkit's, checked against the key given. */
export async function checkSignature(root: string, catalogBytes: Buffer, findings: Finding[], signingCertPem?: string): Promise<void> {
  let sigText: string;
  try {
    sigText = await readFile(join(root, path), 'utf8');
  } catch {
    return; // reported as a missing file already
  }
  let own;
  try {
    own = parseSignatureFile(sigText);
  } catch (err) {
    findings.push({ id: 'signature.malformed', severity: 'error', path, message: (err as Error).message });
    return;
  }
  if (!own) {
    findings.push({
      id: 'signature.vendor',
      severity: 'info',
      path,
      message: "The catalog signature is the vendor's (its format is not public): it is kept byte for byte and not checked here.",
    });
    return;
  }
  if (!signingCertPem) {
    findings.push({
      id: 'signature.unverified',
      severity: 'info',
      path,
      message: 'The catalog carries a depotkit signature; give its signing certificate (`signingCertPem`) to verify it.',
    });
    return;
  }
  const verdict = verifyCatalogSignature(catalogBytes, sigText, signingCertPem);
  if (verdict.status === 'valid') {
    findings.push({ id: 'signature.valid', severity: 'info', path, message: 'The catalog signature is valid for the given key.' });
  } else if (verdict.status === 'other-signer') {
    findings.push({
      id: 'signature.other-signer',
      severity: 'error',
      path,
      message: 'The catalog was signed by another key than the one given.',
      evidence: { signer: verdict.signerSpkiSha256, given: verdict.expected },
    });
  } else if (verdict.status === 'invalid') {
    findings.push({
      id: 'signature.invalid',
      severity: 'error',
      path,
      message: `The catalog signature is not valid: ${verdict.reason}.`,
      fix: 'Make the depot again, or sign the catalog again with its key.',
    });
  }
}
