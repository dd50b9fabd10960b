import { PACK_FORMAT } from '../constants.js';
import { lazyValidator } from '../util/schema.js';

// The pack manifest's shape (docs/transfer.md), as the catalog's is a schema: what the schema cannot
// say (paths under PROD/, pieces that cover each file in order and lie in their volume) format.ts checks.

const sha256 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const count = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
const kind = { enum: ['binary', 'metadata', 'esx-vib', 'esx-metadata'] };
const text = { type: 'string' };
const base = { enum: ['depot', 'pack'] };
const tally = { type: 'object', required: ['binaries', 'bytes'], properties: { binaries: count, bytes: count } };

const piece = {
  type: 'object',
  required: ['volume', 'member', 'fileOffset', 'length', 'dataOffset'],
  properties: { volume: { ...count, minimum: 1 }, member: { type: 'string' }, fileOffset: count, length: count, dataOffset: count },
};

const manifestSchema = {
  type: 'object',
  required: ['format', 'version', 'packId', 'volumeSize', 'source', 'volumes', 'files', 'tree', 'removed'],
  properties: {
    format: { const: PACK_FORMAT.name },
    version: { const: PACK_FORMAT.version },
    packId: { type: 'string' },
    created: { type: 'string' },
    volumeSize: count,
    source: {
      anyOf: [
        {
          type: 'object',
          required: ['catalogSha256'],
          properties: { catalogSha256: sha256, release: { type: 'string' }, releases: { type: 'array', items: { type: 'string' } } },
        },
        // A pack of ESX depots alone: named by their metadata's SHA-256.
        { type: 'object', required: ['esxSha256'], properties: { esxSha256: sha256 } },
      ],
    },
    // A depot's delta names its base's catalog; a delta of ESX depots alone, its base's ESX metadata (format.ts holds each to its source).
    since: {
      anyOf: [
        { type: 'object', required: ['catalogSha256', 'kind'], properties: { catalogSha256: { anyOf: [sha256, { type: 'null' }] }, kind: base, packId: text } },
        { type: 'object', required: ['esxSha256', 'kind'], properties: { esxSha256: sha256, kind: base, packId: text } },
      ],
    },
    selection: {
      type: 'object',
      required: ['releases', 'components', 'chosen', 'leftOut'],
      properties: {
        releases: { type: 'array', items: { type: 'string' } },
        components: { type: 'array', items: { type: 'string' } },
        imageType: { type: 'string' },
        chosen: tally,
        leftOut: tally,
      },
    },
    volumes: {
      type: 'array',
      items: { type: 'object', required: ['index', 'name', 'size', 'sha256'], properties: { index: count, name: { type: 'string' }, size: count, sha256 } },
    },
    files: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'size', 'sha256', 'kind', 'pieces'],
        properties: {
          path: { type: 'string' },
          size: count,
          sha256,
          kind,
          mtime: { type: 'number' },
          catalogMismatch: { type: 'boolean' },
          pieces: { type: 'array', items: piece },
        },
      },
    },
    tree: {
      type: 'array',
      items: { type: 'object', required: ['path', 'size', 'sha256'], properties: { path: { type: 'string' }, size: count, sha256, kind } },
    },
    removed: { type: 'array', items: { type: 'string' } },
    esx: {
      type: 'object',
      required: ['depots', 'products', 'metadata'],
      properties: {
        depots: {
          type: 'array',
          items: { type: 'object', required: ['folder', 'kind', 'index'], properties: { folder: text, kind: { enum: ['index', 'umds'] }, index: text } },
        },
        products: {
          type: 'array',
          items: {
            type: 'object',
            required: ['folder', 'vendor', 'productId', 'version', 'metadata'],
            properties: { folder: text, vendor: text, productId: text, version: text, metadata: text },
          },
        },
        metadata: { type: 'array', items: { type: 'object', required: ['path', 'size', 'sha256'], properties: { path: text, size: count, sha256 } } },
      },
    },
  },
};

export const validatePackManifest = lazyValidator(manifestSchema);
