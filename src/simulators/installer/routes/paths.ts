import type { Request } from 'express';

/** Express's form of a `{name}` path template. */
export const route = (template: string): string => template.replace(/\{(\w+)\}/g, ':$1');

/** A query parameter given once and not empty. */
export function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
