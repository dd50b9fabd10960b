import { createPublicKey } from 'node:crypto';
import { PACK_MANIFEST_FILE, PACK_MANIFEST_SIG_FILE } from '../../constants.js';
import { type SignatureVerdict, verifyCatalogSignature } from '../../depot/signature.js';
import { DepotkitError, EXIT, usageError } from '../../util/errors.js';
import { checkPackSeal } from '../seal.js';
import type { FoundPack } from './find-pack.js';

/**
 * Who vouches for what arrived. `media`: the pack vouched for itself (its
 * checksums are its own, so media whose catalog and binaries were both
 * replaced would pass); `seal`: the seal carried apart from the media
 * matched; `signature`: the manifest's signature verified with the key given.
 */
export type VouchedBy = 'media' | 'seal' | 'signature' | 'seal+signature';

export interface VouchOptions {
  /** The seal carried apart from the media, as a person copied it (`catalog <code> manifest <code>`). */
  expect?: string;
  /** The public key or certificate (PEM) whose private key signed the pack manifest. */
  packSigningCertPem?: string;
}

const NOTHING_PLACED = 'nothing was placed';

function signatureProblem(verdict: SignatureVerdict): string | undefined {
  switch (verdict.status) {
    case 'valid':
      return undefined;
    case 'other-signer':
      return `${PACK_MANIFEST_FILE} was signed by another key than the one given`;
    case 'invalid':
      return `the signature in ${PACK_MANIFEST_SIG_FILE} does not match ${PACK_MANIFEST_FILE}: the manifest was changed after it was signed`;
    case 'not-depotkit':
      return `${PACK_MANIFEST_SIG_FILE} is not a depotkit signature`;
  }
}

/** The manifest must carry a signature that verifies with the key given. */
function checkSignature(found: FoundPack, pem: string): void {
  if (found.signatures.length === 0) {
    throw new DepotkitError(
      `The media carry no ${PACK_MANIFEST_SIG_FILE} beside ${PACK_MANIFEST_FILE}, and a signed pack was asked for: ${NOTHING_PLACED}.`,
      EXIT.problems,
      'Copy the signature file from the pack too, or have the pack made again and signed with the packing key.',
    );
  }
  try {
    createPublicKey(pem);
  } catch {
    throw usageError("The pack's signing certificate is not a PEM public key or certificate.");
  }
  let problem: string | undefined;
  for (const sig of found.signatures) {
    let verdict: SignatureVerdict;
    try {
      verdict = verifyCatalogSignature(found.bytes, sig.text, pem);
    } catch {
      // The key was read above: what fails here is the signature file, as good as none.
      problem ??= `${sig.path} is malformed`;
      continue;
    }
    const wrong = signatureProblem(verdict);
    if (wrong === undefined) return;
    problem ??= wrong;
  }
  throw new DepotkitError(
    `The pack's manifest is not vouched for by the key given: ${problem}; ${NOTHING_PLACED}.`,
    EXIT.problems,
    'Get the pack again from the packing site, and check that the certificate given is the packing key.',
  );
}

/**
 * Holds the manifest to the seal and the signature given, before anything is
 * read from the volumes: the seal's catalog code to the catalog the manifest
 * names as its source (whose bytes are then held to it when read), its
 * manifest code to the manifest's bytes.
 */
export function checkVouchers(found: FoundPack, options: VouchOptions): VouchedBy {
  if (options.packSigningCertPem !== undefined) checkSignature(found, options.packSigningCertPem);
  if (options.expect !== undefined) {
    const check = checkPackSeal(options.expect, { ...found.manifest.source, manifestSha256: found.sha256 });
    if (!check.ok) {
      const part = check.mismatch === 'manifest' ? `manifest (${PACK_MANIFEST_FILE})` : check.mismatch === 'esx' ? 'ESX metadata' : 'catalog';
      throw new DepotkitError(
        `The pack's ${part} does not match the seal given: these media are not the pack the seal was made for, or were altered; ${NOTHING_PLACED}.`,
        EXIT.problems,
        'Compare the seal with the one written down where the pack was made, and get the media again from there.',
      );
    }
  }
  if (options.expect !== undefined && options.packSigningCertPem !== undefined) return 'seal+signature';
  if (options.expect !== undefined) return 'seal';
  if (options.packSigningCertPem !== undefined) return 'signature';
  return 'media';
}
