import { isIP } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import {
  DEPOT_STATUS,
  INSTALLER_API,
  INSTALLER_DEPOT_URL_PATTERN,
  INSTALLER_ERROR_CODES,
  INSTALLER_EXCEPTION_TYPES,
  INSTALLER_JWT,
  INSTALLER_MESSAGES,
  INSTALLER_TRUSTED_CERTS_FIELD_SINCE,
  INSTALLER_URL_FIELD_SINCE,
  TRUSTED_FOR_OUTBOUND,
} from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES, INSTALLER_REMEDIATIONS, INSTALLER_PASSWORD_MASK, INSTALLER_READ_SCOPES } from './literals.js';
import { versionAtLeast } from '../../installer/depot.js';
import { isObject, parseTokenIdBody, type DepotSettings } from '../../installer/wire.js';
import { ApiError, badRequest, errorBody } from './api-error.js';
import { page } from './page.js';
import type { InstallerSimContext } from './context.js';
import { registerLifecycleRoutes } from './lifecycle-routes.js';
import { probeDepot, type DepotProbeOutcome, type DepotTarget } from './depot-probe.js';
import type { StoredDepot } from './state.js';
import { TokenRefused, checkPassword, type AccessClaims } from './tokens.js';
import { BadCertificate, DuplicateCertificate, USAGE_TYPES, parseCertificates, pemOf, type UsageType } from './trust-store.js';

/** The installer API on express: tokens, trusted certificates, depot settings, appliance info. */
export function installerApp(ctx: InstallerSimContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  const json = express.json({ limit: '1mb' });
  // The refresh token id comes quoted (JSON) or raw, with any content type.
  const raw = express.text({ type: () => true, limit: '4kb' });

  app.use((req, res, next) => {
    res.on('finish', () => ctx.log.write('INFO', 'http', `${req.method} ${req.path} ${res.statusCode}`));
    next();
  });

  app.post(INSTALLER_API.tokens, json, async (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || typeof body.username !== 'string' || typeof body.password !== 'string') {
      throw badRequest('The token request needs a username and a password.');
    }
    if (!checkPassword(ctx.users, body.username, body.password)) {
      throw new ApiError(401, INSTALLER_SIM_ERROR_CODES.invalidCredentials, 'Invalid username or password.', INSTALLER_REMEDIATIONS.invalidCredentials);
    }
    // Real installers answer 200 (field clients use the token only then); the published spec says 201.
    res.status(200).json(await ctx.tokens.issuePair(body.username));
    await ctx.changed();
  });

  app.patch(INSTALLER_API.refreshAccessToken, raw, async (req, res) => {
    const id = refreshIdOf(req);
    const token = await ctx.tokens.refresh(id);
    if (!token)
      throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.refreshTokenNotFound, 'The refresh token is not known or has expired.', 'Request a new token pair.');
    res.status(200).json(token);
  });

  app.delete(INSTALLER_API.refreshToken, raw, async (req, res) => {
    // Revoking an unknown id is not an error: the token is gone either way.
    if (ctx.tokens.revoke(refreshIdOf(req))) await ctx.changed();
    res.status(204).end();
  });

  app.get(INSTALLER_API.trustedCertificates, async (req, res) => {
    await authorize(req, INSTALLER_READ_SCOPES);
    const elements = ctx.trust.list().map(({ alias, certificate }) => ({ alias, certificate }));
    res.status(200).json(page(elements));
  });

  app.post(INSTALLER_API.trustedCertificates, json, async (req, res) => {
    await authorize(req, INSTALLER_JWT.writeScopes);
    const body: unknown = req.body;
    if (!isObject(body)) throw badRequest('The request body must be a JSON object with a certificate.');
    // certificateUsageType is deprecated in the published spec: absent means outbound.
    const usage = body.certificateUsageType ?? TRUSTED_FOR_OUTBOUND;
    if (!USAGE_TYPES.includes(usage as UsageType)) {
      throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.unsupportedUsageType, `certificateUsageType must be one of ${USAGE_TYPES.join(', ')}.`);
    }
    let added;
    try {
      added = ctx.trust.add(body.certificate, usage as UsageType);
    } catch (err) {
      if (err instanceof BadCertificate) throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.invalidCertificate, err.message, INSTALLER_REMEDIATIONS.certificate);
      if (err instanceof DuplicateCertificate) throw new ApiError(409, INSTALLER_SIM_ERROR_CODES.certificateAlreadyExists, err.message);
      throw err;
    }
    for (const e of added) ctx.log.write('INFO', 'TrustedCertificateService', `Imported certificate ${e.alias} for ${usage}`);
    await ctx.changed();
    res.status(200).json(page(added.map(({ alias, certificate }) => ({ alias, certificate }))));
  });

  app.delete(`${INSTALLER_API.trustedCertificates}/:alias`, async (req, res) => {
    await authorize(req, INSTALLER_JWT.writeScopes);
    const alias = String(req.params.alias);
    if (!ctx.trust.delete(alias)) {
      // The published spec gives this 404 no body.
      ctx.log.write('WARN', 'TrustedCertificateService', `No trusted certificate has the alias ${alias}`);
      res.status(404).end();
      return;
    }
    ctx.log.write('INFO', 'TrustedCertificateService', `Deleted certificate ${alias}`);
    await ctx.changed();
    res.status(204).end();
  });

  app.get(INSTALLER_API.depotSettings, async (req, res) => {
    await authorize(req);
    res.status(200).json(settingsView(ctx.depot.current));
  });

  app.put(INSTALLER_API.depotSettings, json, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    const { target, account, url, trustedCertificates } = parseDepotSettings(req.body, ctx.version);
    ctx.log.addSecret(account.password);
    ctx.log.write('INFO', 'DepotSettingsService', `Updating depot settings: ${JSON.stringify(maskedSettings(req.body))}`);
    // Over hostname and port a user is required even for an open depot (any
    // name works there); only the 9.1 url field may go without one.
    const outcome: DepotProbeOutcome =
      url === undefined && !account.username
        ? {
            ok: false,
            errorCode: INSTALLER_ERROR_CODES.depotUserNotSet,
            status: DEPOT_STATUS.userNotSet,
            message: 'The depot settings have no offlineAccount.username.',
            remediation: INSTALLER_REMEDIATIONS.depotUserNotSet,
            cause: 'offlineAccount.username is not set',
          }
        : await probeDepot(target, account, [...ctx.trust.outboundPems(), ...trustedCertificates], ctx.log, {
            timeoutMs: ctx.depotTimeoutMs,
            resolve: ctx.resolve,
          });
    // The attempt is kept, failed or not, so that GET shows what was tried and why it failed.
    ctx.depot.current = {
      ...(account.username ? { username: account.username } : {}),
      hostname: target.host,
      port: target.port,
      ...(url ? { url } : {}),
      ...(trustedCertificates.length > 0 ? { trustedCertificates } : {}),
      status: outcome.ok ? DEPOT_STATUS.connectionSuccessful : outcome.status,
      message: outcome.ok ? 'Depot connection successful.' : outcome.message,
    };
    ctx.depot.password = account.password;
    await ctx.changed();
    if (!outcome.ok) {
      ctx.log.write('ERROR', 'DepotSettingsService', `Depot validation failed: ${outcome.errorCode}: ${outcome.cause}`);
      if (outcome.errorCode === INSTALLER_ERROR_CODES.depotConnectFailure) {
        // Word for word what a 9.0.1 installer answered (vmware/Holodeck#67); the detail is only in the log.
        const cause = INSTALLER_MESSAGES.depotConnectFailureCause;
        throw new ApiError(
          403,
          outcome.errorCode,
          outcome.message,
          outcome.remediation,
          [{ type: INSTALLER_EXCEPTION_TYPES.depotConnectionFailure, message: cause }],
          {
            arguments: [cause],
          },
        );
      }
      throw new ApiError(400, outcome.errorCode, outcome.message, outcome.remediation, [{ type: outcome.status, message: outcome.cause }]);
    }
    ctx.log.write('INFO', 'DepotSettingsService', `Depot ${target.host}:${target.port} validated: ${DEPOT_STATUS.connectionSuccessful}`);
    res.status(202).json(settingsView(ctx.depot.current));
  });

  // No token needed: deployment scripts poll it as the appliance's readiness probe.
  app.get(INSTALLER_API.applianceInfo, (_req, res) => {
    res.status(200).json({ role: ctx.role, version: ctx.version });
  });

  registerLifecycleRoutes(app, ctx, ctx.lifecycle, authorize);

  app.use((req) => {
    throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.notFound, `No operation at ${req.method} ${req.path}.`);
  });

  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    let error: ApiError;
    if (err instanceof ApiError) error = err;
    else if (isObject(err) && (err.type === 'entity.parse.failed' || err.type === 'entity.too.large'))
      error = badRequest('The request body is not valid JSON.');
    else {
      ctx.log.write('ERROR', 'http', `Internal error: ${err instanceof Error ? err.message : String(err)}`);
      error = new ApiError(500, INSTALLER_SIM_ERROR_CODES.internal, 'Internal error in the simulator.');
    }
    res.status(error.status).json(errorBody(error));
  });

  async function authorize(req: Request, anyOf?: readonly string[]): Promise<AccessClaims> {
    let claims: AccessClaims;
    try {
      claims = await ctx.tokens.verify(req.get('authorization'));
    } catch (err) {
      if (err instanceof TokenRefused) throw new ApiError(401, INSTALLER_SIM_ERROR_CODES.unauthorized, err.message, 'Request a new access token.');
      throw err;
    }
    if (anyOf && !claims.scope.some((s) => anyOf.includes(s))) {
      throw new ApiError(403, INSTALLER_SIM_ERROR_CODES.forbidden, `The access token lacks the scope for this operation (one of ${anyOf.join(', ')}).`);
    }
    return claims;
  }

  return app;
}

function refreshIdOf(req: Request): string {
  const id = parseTokenIdBody(typeof req.body === 'string' ? req.body : '');
  if (!id) throw badRequest('The request body must be the refresh token id.');
  return id;
}

/** The settings as GET shows them: never the password. */
function settingsView(depot: StoredDepot | undefined): DepotSettings {
  if (!depot) return { offlineAccount: { status: DEPOT_STATUS.userNotSet, message: 'No offline depot is configured.' } };
  return {
    offlineAccount: { ...(depot.username ? { username: depot.username } : {}), status: depot.status, message: depot.message },
    depotConfiguration: { isOfflineDepot: true, hostname: depot.hostname, port: depot.port, ...(depot.url ? { url: depot.url } : {}) },
  };
}

/** The request as the depot-settings operation logs it, with the password masked. */
function maskedSettings(body: unknown): unknown {
  if (!isObject(body)) return body;
  const account = isObject(body.offlineAccount)
    ? { ...body.offlineAccount, ...(body.offlineAccount.password !== undefined ? { password: INSTALLER_PASSWORD_MASK } : {}) }
    : body.offlineAccount;
  return { ...body, ...(account !== undefined ? { offlineAccount: account } : {}) };
}

/**
 * A boolean as the installer's JSON mapper (Jackson) reads one: a JSON boolean,
 * or the strings "true"/"false" in any case; anything else is not a boolean.
 */
function coerceBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return undefined;
}

/** An int as Jackson reads one: a JSON number (fractions truncated) or a string of digits ("443"). */
function coerceInteger(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'string' && /^[+-]?\d{1,10}$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

const DNS_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/**
 * A depot hostname: a DNS name or an IP address (IPv6 with or without
 * brackets). A user, a path, a fragment, a ":port" suffix, whitespace or
 * control characters make it something else, which the installer refuses.
 */
export function depotHostOf(value: string): string | undefined {
  const bare = value.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return bare;
  return DNS_NAME.test(value) ? value : undefined;
}

/** The depot settings a PUT asks for, read as the installer reads them. */
export interface ParsedDepotSettings {
  target: DepotTarget;
  account: { username?: string; password?: string };
  url?: string;
  /** PEM certificates trusted for this depot only (9.1.1 and later). */
  trustedCertificates: string[];
}

/**
 * Checks a PUT body and says where the depot is: hostname and port, or (9.1)
 * `url`. Scalars are coerced and unknown fields ignored as the installer's
 * JSON mapper does; fields of later versions are unknown to earlier ones.
 */
export function parseDepotSettings(body: unknown, version: string): ParsedDepotSettings {
  if (!isObject(body)) throw badRequest('The depot settings must be a JSON object.');
  const invalid = (message: string) => new ApiError(400, INSTALLER_SIM_ERROR_CODES.invalidDepotSettings, message);
  const rawAccount = body.offlineAccount;
  if (rawAccount !== undefined && rawAccount !== null && !isObject(rawAccount)) throw invalid('offlineAccount must be an object.');
  const account = {
    username: typeof rawAccount?.username === 'string' && rawAccount.username !== '' ? rawAccount.username : undefined,
    password: typeof rawAccount?.password === 'string' ? rawAccount.password : undefined,
  };
  const conf = body.depotConfiguration;
  if (!isObject(conf)) throw invalid('depotConfiguration is required.');
  const offline = coerceBoolean(conf.isOfflineDepot);
  if (conf.isOfflineDepot !== undefined && offline === undefined) throw invalid('depotConfiguration.isOfflineDepot must be a boolean.');
  if (offline !== true) throw invalid('Only offline depots are supported here: depotConfiguration.isOfflineDepot must be true.');
  const trustedCertificates = versionAtLeast(version, INSTALLER_TRUSTED_CERTS_FIELD_SINCE) ? depotTrustedCertificates(conf.trustedCertificates, invalid) : [];
  if (conf.url !== undefined && conf.url !== null && versionAtLeast(version, INSTALLER_URL_FIELD_SINCE)) {
    if (typeof conf.url !== 'string' || !INSTALLER_DEPOT_URL_PATTERN.test(conf.url))
      throw invalid('depotConfiguration.url must be an http:// or https:// URL.');
    let url: URL;
    try {
      url = new URL(conf.url);
    } catch {
      throw invalid('depotConfiguration.url must be an http:// or https:// URL.');
    }
    const https = url.protocol === 'https:';
    // With Basic auth TLS is required, so credentials never go in clear text.
    if (!https && (account.username !== undefined || account.password !== undefined)) {
      throw invalid('Depot credentials go only over HTTPS: an http:// depot url takes no offlineAccount user or password.');
    }
    const target: DepotTarget = {
      https,
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port ? Number(url.port) : https ? 443 : 80,
      prefix: url.pathname.replace(/\/+$/, ''),
    };
    return { target, account, url: conf.url, trustedCertificates };
  }
  if (typeof conf.hostname !== 'string' || conf.hostname.trim() === '') throw invalid('depotConfiguration.hostname is required.');
  const host = depotHostOf(conf.hostname);
  if (host === undefined) throw invalid(`depotConfiguration.hostname must be a host name or an IP address, not "${conf.hostname}".`);
  const port = coerceInteger(conf.port);
  if (port === undefined || port < 1 || port > 65535) throw invalid('depotConfiguration.port must be a TCP port (1 to 65535).');
  return { target: { https: true, host, port, prefix: '' }, account, trustedCertificates };
}

/** `depotConfiguration.trustedCertificates`: PEM texts, each holding one or more certificates. */
function depotTrustedCertificates(value: unknown, invalid: (message: string) => ApiError): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw invalid('depotConfiguration.trustedCertificates must be a list of PEM certificates.');
  try {
    return value.flatMap((pem) => parseCertificates(pem).map(pemOf));
  } catch (err) {
    if (err instanceof BadCertificate) throw invalid(`depotConfiguration.trustedCertificates: ${err.message}`);
    throw err;
  }
}
