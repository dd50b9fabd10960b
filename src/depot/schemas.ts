import { BUNDLE_TYPES } from '../constants.js';

/**
 * JSON Schemas of the depot's metadata. They describe what the installer and
 * public scripts read, and allow any other field: real catalogs carry more.
 */

const sha256Hex = { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } as const;

export const catalogSchema = {
  $id: 'productVersionCatalog',
  type: 'object',
  required: ['patches'],
  properties: {
    patches: {
      type: 'object',
      // Component names become folder names: nothing that could leave PROD/COMP.
      propertyNames: { pattern: '^[A-Za-z0-9_-]+$' },
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          required: ['productVersion', 'artifacts'],
          properties: {
            productVersion: { type: 'string', minLength: 1 },
            releaseDate: { type: 'string' },
            artifacts: {
              type: 'object',
              required: ['bundles'],
              properties: {
                bundles: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['name', 'type', 'binaries'],
                    properties: {
                      name: { type: 'string' },
                      type: { type: 'string', enum: [...BUNDLE_TYPES] },
                      binaries: {
                        type: 'array',
                        items: {
                          type: 'object',
                          required: ['fileName', 'size', 'checksum'],
                          properties: {
                            // A bare file name (the installer fetches COMP/<component>/<fileName>): the catalog reader refuses the rest with a sentence.
                            fileName: { type: 'string', minLength: 1 },
                            size: { type: 'integer', minimum: 0 },
                            checksum: sha256Hex,
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

const hclTimes = {
  timestamp: { type: 'integer', minimum: 0 },
  jsonUpdatedTime: { type: ['string', 'integer'] },
} as const;

export const hclLastUpdatedSchema = {
  $id: 'lastupdatedtime',
  type: 'object',
  required: ['timestamp', 'jsonUpdatedTime'],
  properties: hclTimes,
} as const;

/** Only the parts of the vSAN HCL that the installer's freshness check reads. */
export const hclAllSchema = {
  $id: 'hclAll',
  type: 'object',
  required: ['timestamp', 'jsonUpdatedTime'],
  properties: { ...hclTimes, data: { type: 'object' } },
} as const;

export const SIGNATURE_FORMAT = 'depotkit-catalog-signature';

/** The toolkit's own signature file, for depots it makes up (see docs/signature.md). */
export const signatureSchema = {
  $id: 'depotkitSignature',
  type: 'object',
  required: ['format', 'version', 'algorithm', 'catalogSha256', 'signerSpkiSha256', 'signature'],
  additionalProperties: false,
  properties: {
    format: { const: SIGNATURE_FORMAT },
    version: { const: 1 },
    algorithm: { const: 'ECDSA-P256-SHA256' },
    catalogSha256: sha256Hex,
    signerSpkiSha256: sha256Hex,
    signedAt: { type: 'string' },
    signature: { type: 'string', pattern: '^[A-Za-z0-9+/]+=*$' },
  },
} as const;
