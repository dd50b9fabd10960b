import { DEPOT_PATHS, HCL_MAX_AGE_DAYS } from '../constants.js';
import type { Finding } from '../util/findings.js';
import { describeSchemaErrors } from '../util/schema.js';
import { validateHclAll, validateHclLastUpdated } from './validators.js';

/** The pair of HCL time fields; `lastupdatedtime.json` copies both from `all.json`. */
export interface HclTimes {
  timestamp: number;
  jsonUpdatedTime: string | number;
}

export function hclTimestamps(now: Date): HclTimes {
  const jsonUpdatedTime = now.toLocaleString('en-US', {
    timeZone: 'UTC',
    month: 'long',
    day: 'numeric',
    year: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  });
  return { timestamp: Math.floor(now.getTime() / 1000), jsonUpdatedTime: `${jsonUpdatedTime} UTC` };
}

/** `timestamp` is epoch seconds in the vendor's files; tolerate milliseconds. */
export function hclDate(times: HclTimes): Date {
  return new Date(times.timestamp > 1e12 ? times.timestamp : times.timestamp * 1000);
}

export function hclAgeDays(times: HclTimes, now = new Date()): number {
  return (now.getTime() - hclDate(times).getTime()) / 86_400_000;
}

/**
 * Checks the two HCL files' parsed contents (undefined: missing or not JSON,
 * reported elsewhere): schema, agreeing time fields, age. Used on a tree and
 * on a depot over HTTP alike.
 */
export function checkHclContent(all: unknown, last: unknown, now = new Date()): Finding[] {
  const findings: Finding[] = [];
  let times: HclTimes | undefined;
  if (all !== undefined) {
    if (validateHclAll(all)) times = all as HclTimes;
    else
      findings.push({
        id: 'hcl.schema.invalid',
        severity: 'error',
        path: DEPOT_PATHS.hclAll,
        message: `${DEPOT_PATHS.hclAll}: ${describeSchemaErrors(validateHclAll.errors)}.`,
      });
  }
  if (last !== undefined) {
    if (!validateHclLastUpdated(last)) {
      findings.push({
        id: 'hcl.schema.invalid',
        severity: 'error',
        path: DEPOT_PATHS.hclLastUpdated,
        message: `${DEPOT_PATHS.hclLastUpdated}: ${describeSchemaErrors(validateHclLastUpdated.errors)}.`,
      });
    } else if (times) {
      const l = last as HclTimes;
      if (l.timestamp !== times.timestamp || l.jsonUpdatedTime !== times.jsonUpdatedTime) {
        findings.push({
          id: 'hcl.timestamp.mismatch',
          severity: 'error',
          path: DEPOT_PATHS.hclLastUpdated,
          message: `${DEPOT_PATHS.hclLastUpdated} does not carry the same timestamp and jsonUpdatedTime as all.json.`,
          evidence: { allJson: { timestamp: times.timestamp, jsonUpdatedTime: times.jsonUpdatedTime }, lastUpdated: l },
          fix: 'Copy both HCL files from the same download.',
        });
      }
    }
  }
  if (times) {
    const age = hclAgeDays(times, now);
    if (age > HCL_MAX_AGE_DAYS) {
      findings.push({
        id: 'hcl.stale',
        severity: 'warning',
        path: DEPOT_PATHS.hclAll,
        message: `The vSAN HCL is ${Math.floor(age)} days old (more than ${HCL_MAX_AGE_DAYS}).`,
        evidence: { ageDays: Math.floor(age), timestamp: times.timestamp },
        installer: 'reports the HCL as out of date and may refuse vSAN validation',
        fix: 'Download a current all.json and lastupdatedtime.json and replace both.',
      });
    }
  }
  return findings;
}
