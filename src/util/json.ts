import { errorMessage } from './errors.js';

/** A JSON object (not an array, not null): what a field can be read from. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parsed value, or undefined when `text` is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The parsed value, or one sentence saying why `what` (`The catalog`) is not JSON. */
export function parseJsonOrWhy(text: string, what: string): { value: unknown } | string {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return `${what} is not valid JSON: ${errorMessage(err)}.`;
  }
}
