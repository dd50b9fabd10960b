import { randomBytes, randomUUID } from 'node:crypto';
import { INSTALLER_JWT } from '../../constants.js';
import { constantTimeEqual } from '../../util/secret-compare.js';
import { JwtRefused, signHs256, verifyHs256 } from './jwt.js';

/** The claims the installer puts in an access token (as the installer documents its access token). */
export interface AccessClaims {
  jti: string;
  iat: number;
  nbf: number;
  exp: number;
  sub: string;
  user: string;
  name: string;
  iss: string;
  aud: string;
  scope: string[];
  role: string[];
  isIssuedForJwt: boolean;
}

export interface RefreshRecord {
  user: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/** Why a token was refused; the message goes into the 401 body. */
export class TokenRefused extends Error {}

/**
 * Access tokens (HS256 JWTs signed with the simulator's secret) and refresh
 * tokens (UUIDs kept server-side). `clock` gives milliseconds since the epoch,
 * so that tests can move time forward.
 */
export class TokenService {
  private readonly key: Uint8Array;

  constructor(
    readonly secretHex: string,
    readonly refreshTokens: Map<string, RefreshRecord>,
    private readonly clock: () => number,
    private readonly scopesOf: (user: string) => readonly string[],
  ) {
    this.key = Buffer.from(secretHex, 'hex');
  }

  static newSecret(): string {
    return randomBytes(32).toString('hex');
  }

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }

  accessToken(user: string): string {
    const iat = this.now();
    const claims: AccessClaims = {
      jti: randomUUID(),
      iat,
      nbf: iat,
      exp: iat + INSTALLER_JWT.lifetimeSeconds,
      sub: user,
      user,
      name: user,
      iss: INSTALLER_JWT.iss,
      aud: INSTALLER_JWT.aud,
      scope: [...this.scopesOf(user)],
      role: [INSTALLER_JWT.role],
      isIssuedForJwt: false,
    };
    return signHs256(claims, this.key);
  }

  issuePair(user: string): { accessToken: string; refreshToken: { id: string } } {
    const id = randomUUID();
    this.refreshTokens.set(id, { user, expiresAt: this.now() + INSTALLER_JWT.refreshLifetimeSeconds });
    return { accessToken: this.accessToken(user), refreshToken: { id } };
  }

  /** A new access token for a live refresh token id; undefined when unknown or expired. */
  refresh(id: string): string | undefined {
    const record = this.refreshTokens.get(id);
    if (!record) return undefined;
    if (record.expiresAt <= this.now()) {
      this.refreshTokens.delete(id);
      return undefined;
    }
    return this.accessToken(record.user);
  }

  revoke(id: string): boolean {
    return this.refreshTokens.delete(id);
  }

  /**
   * Verifies an `Authorization: Bearer` header: HS256 only (so `alg: none`
   * and any other algorithm fail), signature, issuer, audience, nbf and exp;
   * a token lacking exp (or any claim the installer always sets) is refused,
   * since it would never expire.
   */
  verify(header: string | undefined): AccessClaims {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) throw new TokenRefused('The request has no bearer access token.');
    let payload: Record<string, unknown>;
    try {
      payload = verifyHs256(match[1]!, this.key, {
        issuer: INSTALLER_JWT.iss,
        audience: INSTALLER_JWT.aud,
        now: this.now(),
        requiredClaims: ['exp', 'iat', 'nbf', 'jti', 'sub'],
      });
    } catch (err) {
      if (err instanceof JwtRefused && err.expired) throw new TokenRefused('The access token has expired.');
      throw new TokenRefused('The access token is not valid.');
    }
    if (!Array.isArray(payload.scope) || typeof payload.sub !== 'string') throw new TokenRefused('The access token lacks its claims.');
    return payload as unknown as AccessClaims;
  }
}

/** Compares a password in constant time per user, so timing tells nothing about it. */
export function checkPassword(users: Readonly<Record<string, string>>, user: string, password: string): boolean {
  const expected = Object.hasOwn(users, user) ? users[user]! : undefined;
  return constantTimeEqual(password, expected ?? randomBytes(16).toString('hex')) && expected !== undefined;
}
