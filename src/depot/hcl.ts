import { HCL_MAX_AGE_DAYS } from '../constants.js';

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

export function isHclStale(times: HclTimes, now = new Date()): boolean {
  return hclAgeDays(times, now) > HCL_MAX_AGE_DAYS;
}
