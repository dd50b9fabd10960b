import { execFile } from 'node:child_process';
import { CADDY_BASIC_AUTH_SINCE } from '../constants.js';
import { usageError } from '../util/errors.js';

/** `2.6.2` out of `caddy version`'s `2.6.2` (Debian) or `v2.8.4 h1:...` (upstream builds). */
export function parseCaddyVersion(text: string): string | undefined {
  return /\bv?(\d+\.\d+(?:\.\d+)?)/.exec(text)?.[1];
}

/** The installed Caddy's version, asking `caddy version`; undefined when there is no caddy to ask. */
export function installedCaddyVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('caddy', ['version'], { timeout: 10_000 }, (err, stdout) => resolve(err ? undefined : parseCaddyVersion(stdout)));
  });
}

function compare(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** `basic_auth` from Caddy 2.8 on; `basicauth` before (Debian 12 ships 2.6). */
export function basicAuthDirective(version: string): 'basic_auth' | 'basicauth' {
  return compare(version, CADDY_BASIC_AUTH_SINCE) >= 0 ? 'basic_auth' : 'basicauth';
}

/** A version given as `caddyVersion`: 2.6, 2.6.2 or v2.8.4. */
export function caddyVersionOption(text: string): string {
  const version = parseCaddyVersion(text);
  if (!version || !/^v?\d+\.\d+(\.\d+)?$/.test(text.trim()) || !version.startsWith('2.')) {
    throw usageError(`\`caddyVersion\` "${text}" is not a Caddy 2 version such as 2.6.2 or 2.8.4.`);
  }
  return version;
}
