import type { Validator } from '../util/schema.js';
import * as compiled from './schema-validators.js';

// The schemas of schemas.ts compiled ahead of time (scripts/build/schema-validators.ts): `depot verify` and `check`
// read them at every start, and ajv's loading and code generation cost more than either command's own work.
export const validateCatalog = compiled.validateCatalog as Validator;
export const validateHclLastUpdated = compiled.validateHclLastUpdated as Validator;
export const validateHclAll = compiled.validateHclAll as Validator;
export const validateSignature = compiled.validateSignature as Validator;
