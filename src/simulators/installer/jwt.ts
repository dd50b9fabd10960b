import { createHmac, timingSafeEqual } from 'node:crypto';
import { INSTALLER_JWT } from '../../constants.js';

/**
 * HS256 JSON Web Tokens (RFC 7519, compact JWS of RFC 7515) on node:crypto's HMAC, which is
 * synchronous: a simulated installer verifies a token on every request, and WebCrypto's HMAC
 * (a job and a promise each time, the key imported again) was the largest part of its cost.
 */

/** Why a token was refused: `expired` is told apart, as the installer's message tells it. */
export class JwtRefused extends Error {
  constructor(readonly expired = false) {
    super(expired ? 'expired' : 'invalid');
  }
}

const HEADER = Buffer.from(JSON.stringify({ alg: INSTALLER_JWT.alg, typ: 'JWT' })).toString('base64url');

function mac(key: Uint8Array, signingInput: string): string {
  return createHmac('sha256', key).update(signingInput).digest('base64url');
}

export function signHs256(claims: object, key: Uint8Array): string {
  const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signingInput}.${mac(key, signingInput)}`;
}

/** A base64url part as a JSON object; anything else refuses the token. */
function jsonObjectOf(part: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) throw new JwtRefused();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new JwtRefused();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new JwtRefused();
  return value as Record<string, unknown>;
}

export interface Hs256Checks {
  issuer: string;
  audience: string;
  /** Seconds since the epoch. */
  now: number;
  /** Claims a token must carry (issuer and audience always). */
  requiredClaims: readonly string[];
}

/**
 * The claims of a compact HS256 token signed with `key`. Refused: another number of parts, a
 * header whose alg is not HS256 (so `none` too) or that names critical extensions, a signature
 * that is not the token's, a missing required claim, another issuer or audience, an iat, nbf or
 * exp that is not a number, a token not yet valid (nbf after now) and one expired (exp at or
 * before now), in that order.
 */
export function verifyHs256(token: string, key: Uint8Array, checks: Hs256Checks): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtRefused();
  const [header, payload, signature] = parts as [string, string, string];
  const protectedHeader = jsonObjectOf(header);
  if (protectedHeader.alg !== INSTALLER_JWT.alg || 'crit' in protectedHeader) throw new JwtRefused();
  const expected = Buffer.from(mac(key, `${header}.${payload}`));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new JwtRefused();
  const claims = jsonObjectOf(payload);
  for (const name of [...checks.requiredClaims, 'iss', 'aud']) if (!(name in claims)) throw new JwtRefused();
  if (claims.iss !== checks.issuer) throw new JwtRefused();
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(checks.audience)) throw new JwtRefused();
  for (const name of ['iat', 'nbf', 'exp']) if (name in claims && typeof claims[name] !== 'number') throw new JwtRefused();
  if (typeof claims.nbf === 'number' && claims.nbf > checks.now) throw new JwtRefused();
  if (typeof claims.exp === 'number' && claims.exp <= checks.now) throw new JwtRefused(true);
  return claims;
}
