import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { GENERATED_PATH, schemaValidatorsModule } from '../../scripts/build/schema-validators.js';
import { catalogSchema, hclAllSchema, signatureSchema } from '../../src/depot/schemas.js';
import { validateCatalog, validateHclAll, validateSignature } from '../../src/depot/validators.js';
import { AJV_OPTIONS, type Validator } from '../../src/util/schema.js';

const binary = { fileName: 'a.iso', size: 1, checksum: 'ab'.repeat(32) };
const entry = (over: object = {}) => ({ productVersion: '9.0.0.0', artifacts: { bundles: [{ name: 'b', type: 'INSTALL', binaries: [binary] }] }, ...over });

/** Documents each validator is given: valid ones and one of each kind of mistake. */
const CASES: [string, Validator, object, unknown[]][] = [
  [
    'catalog',
    validateCatalog,
    catalogSchema,
    [
      { patches: { ESX_HOST: [entry()] } },
      {},
      { patches: { 'ESX HOST': [entry()] } },
      { patches: { ESX_HOST: [entry({ productVersion: '' })] } },
      // One character of two UTF-16 units: ajv counts characters, not units.
      { patches: { ESX_HOST: [entry({ productVersion: '\u{1F600}' })] } },
      { patches: { ESX_HOST: [entry({ artifacts: { bundles: [{ name: 'b', type: 'OTHER', binaries: [{ ...binary, size: -1, checksum: 'x' }] }] } })] } },
      { patches: { ESX_HOST: 'none' } },
      [],
    ],
  ],
  [
    'hcl all',
    validateHclAll,
    hclAllSchema,
    [
      { timestamp: 1, jsonUpdatedTime: 'x' },
      { timestamp: -1, jsonUpdatedTime: null, data: [] },
    ],
  ],
  [
    'signature',
    validateSignature,
    signatureSchema,
    [{ format: 'other', version: 2, algorithm: 'RSA', catalogSha256: 'x', signerSpkiSha256: 'ab'.repeat(32), signature: '!', extra: 1 }, 'text'],
  ],
];

describe('the depot validators compiled ahead of time', () => {
  it('are what ajv generates from the schemas now (run scripts/build/schema-validators.ts when this fails)', async () => {
    expect(await readFile(GENERATED_PATH, 'utf8')).toBe(schemaValidatorsModule());
  });

  it('judge every document as ajv compiling the schema at run time does, with the same errors', () => {
    for (const [name, ahead, schema, documents] of CASES) {
      const atRunTime = new Ajv(AJV_OPTIONS).compile(schema);
      const verdicts = documents.map((doc) => {
        const ok = ahead(doc);
        expect([ok, ahead.errors], `${name} ${JSON.stringify(doc)}`).toEqual([atRunTime(doc), atRunTime.errors ?? null]);
        return ok;
      });
      // Both verdicts occur: the comparison is not of two validators that accept everything.
      expect(new Set(verdicts).size, name).toBe(name === 'signature' ? 1 : 2);
    }
  });
});
