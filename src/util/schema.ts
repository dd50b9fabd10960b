import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

let ajv: Ajv | undefined;

/** ajv's options, for validators compiled at run time and for those generated ahead of it (scripts/build/schema-validators.ts). */
export const AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true } as const;

export interface Validator {
  (data: unknown): boolean;
  errors: ErrorObject[] | null | undefined;
}

/**
 * Compiles on first use: compiling every schema at start-up would slow every command down. The
 * depot's schemas, which commands run in a loop read, are compiled ahead of time instead
 * (depot/validators.ts).
 */
export function lazyValidator(schema: object): Validator {
  let compiled: ValidateFunction | undefined;
  const validate: Validator = Object.assign(
    (data: unknown) => {
      ajv ??= new (createRequire(import.meta.url)('ajv') as typeof import('ajv')).Ajv(AJV_OPTIONS);
      compiled ??= ajv.compile(schema);
      const ok = compiled(data);
      validate.errors = compiled.errors;
      return ok;
    },
    { errors: null },
  );
  return validate;
}

/** The first few schema errors as one readable sentence. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined, limit = 3): string {
  if (!errors?.length) return 'unknown schema error';
  const parts = errors.slice(0, limit).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  const more = errors.length > limit ? ` (and ${errors.length - limit} more)` : '';
  return parts.join('; ') + more;
}
