import express from 'express';
import {
  DEPOT_STATUS,
  INSTALLER_API,
  INSTALLER_ERROR_CODES,
  INSTALLER_EXCEPTION_TYPES,
  INSTALLER_JWT,
  INSTALLER_MESSAGES,
  TRUSTED_FOR_OUTBOUND,
} from '../../../constants.js';
import { INSTALLER_PASSWORD_MASK, INSTALLER_REMEDIATIONS } from '../literals.js';
import { ApiError } from '../api-error.js';
import type { Authorize } from '../authorize.js';
import type { InstallerSimContext } from '../context.js';
import { probeDepot, type DepotProbeOutcome } from '../depot-probe.js';
import { readDepotSettings, type DepotSettingsRequest } from '../depot-settings-request.js';
import type { StoredDepot } from '../state.js';
import { DuplicateCertificate } from '../trust-store.js';
import type { DepotSettingsView } from '../wire.js';

const COMPONENT = 'DepotSettingsService';

/**
 * The settings as GET shows them: never the password. With no depot, no account and no
 * configuration: automation (the vendor's Ansible module) reads an account status or user
 * name as a depot already configured, and would then never configure one.
 */
function settingsView(depot: StoredDepot | undefined): DepotSettingsView {
  if (!depot) return {};
  return {
    offlineAccount: { ...(depot.username ? { username: depot.username } : {}), status: depot.status, message: depot.message },
    depotConfiguration: { isOfflineDepot: true, hostname: depot.hostname, port: depot.port, ...(depot.url ? { url: depot.url } : {}) },
  };
}

/**
 * The request as the depot-settings operation logs it, and the passwords it masked: every
 * `password`, the offline account's and one put where the service does not read it
 * (credentials inside depotConfiguration), which the log must not show either.
 */
function maskedSettings(body: unknown): { text: string; passwords: string[] } {
  const passwords: string[] = [];
  const text = JSON.stringify(body, (key, value: unknown) => {
    if (key !== 'password' || value === undefined || value === null) return value;
    if (typeof value === 'string') passwords.push(value);
    return INSTALLER_PASSWORD_MASK;
  });
  return { text, passwords };
}

/**
 * Validates the depot for real. Over hostname and port a user is required even for an
 * open depot (any name works there); only the 9.1 url field may go without one.
 */
async function validate(ctx: InstallerSimContext, { target, account, url }: DepotSettingsRequest): Promise<DepotProbeOutcome> {
  if (url === undefined && !account.username) {
    return {
      ok: false,
      errorCode: INSTALLER_ERROR_CODES.depotUserNotSet,
      status: DEPOT_STATUS.userNotSet,
      message: 'The depot settings have no offlineAccount.username.',
      remediation: INSTALLER_REMEDIATIONS.depotUserNotSet,
      cause: 'offlineAccount.username is not set',
    };
  }
  return probeDepot(target, account, ctx.trust.outboundPems(), ctx.log, { timeoutMs: ctx.depotTimeoutMs, resolve: ctx.resolve, tls: ctx.depotTls });
}

/** The attempt is kept, failed or not, so that GET shows what was tried and why it failed. */
function keepAttempt(ctx: InstallerSimContext, { target, account, url }: DepotSettingsRequest, outcome: DepotProbeOutcome): void {
  ctx.depot.current = {
    ...(account.username ? { username: account.username } : {}),
    hostname: target.host,
    port: target.port,
    ...(url ? { url } : {}),
    status: outcome.ok ? DEPOT_STATUS.connectionSuccessful : outcome.status,
    message: outcome.ok ? 'Depot connection successful.' : outcome.message,
  };
  ctx.depot.password = account.password;
}

/**
 * 9.1.1 puts the certificates sent with the settings into the appliance's stores (the
 * service's keystore, the JVM's, the system's): they stay trusted after this request
 * and are listed with the others. One already there is left as it is.
 */
function importDepotCertificates(ctx: InstallerSimContext, pems: string[]): boolean {
  let imported = false;
  for (const pem of pems) {
    try {
      for (const e of ctx.trust.add(pem, TRUSTED_FOR_OUTBOUND)) {
        ctx.log.write('INFO', 'TrustedCertificateService', `Imported certificate ${e.alias} from the depot settings for ${TRUSTED_FOR_OUTBOUND}`);
        imported = true;
      }
    } catch (err) {
      if (!(err instanceof DuplicateCertificate)) throw err;
    }
  }
  return imported;
}

/** The refusal of a failed validation. */
function refusal(outcome: Extract<DepotProbeOutcome, { ok: false }>): ApiError {
  if (outcome.errorCode === INSTALLER_ERROR_CODES.depotConnectFailure) {
    // Word for word what a 9.0.1 installer answered (vmware/Holodeck#67); the detail is only in the log.
    const cause = INSTALLER_MESSAGES.depotConnectFailureCause;
    const causes = [{ type: INSTALLER_EXCEPTION_TYPES.depotConnectionFailure, message: cause }];
    return new ApiError(403, outcome.errorCode, outcome.message, outcome.remediation, causes, { arguments: [cause] });
  }
  return new ApiError(400, outcome.errorCode, outcome.message, outcome.remediation, [{ type: outcome.status, message: outcome.cause }]);
}

/** The depot settings: show, update (validating the depot), delete. */
export function registerDepotSettingsRoutes(app: express.Express, ctx: InstallerSimContext, authorize: Authorize): void {
  const json = express.json({ limit: '1mb' });

  app.get(INSTALLER_API.depotSettings, async (req, res) => {
    await authorize(req);
    res.status(200).json(settingsView(ctx.depot.current));
  });

  app.put(INSTALLER_API.depotSettings, json, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    const request = readDepotSettings(req.body, ctx.version);
    const logged = maskedSettings(req.body);
    for (const secret of [...logged.passwords, ...request.urlSecrets]) ctx.log.addSecret(secret);
    ctx.log.write('INFO', COMPONENT, `Updating depot settings: ${logged.text}`);
    if (importDepotCertificates(ctx, request.trustedCertificates)) await ctx.changed();
    const outcome = await validate(ctx, request);
    keepAttempt(ctx, request, outcome);
    await ctx.changed();
    if (!outcome.ok) {
      ctx.log.write('ERROR', COMPONENT, `Depot validation failed: ${outcome.errorCode}: ${outcome.cause}`);
      throw refusal(outcome);
    }
    ctx.log.write('INFO', COMPONENT, `Depot ${request.target.host}:${request.target.port} validated: ${DEPOT_STATUS.connectionSuccessful}`);
    res.status(202).json(settingsView(ctx.depot.current));
  });

  app.delete(INSTALLER_API.depotSettings, async (req, res) => {
    await authorize(req, INSTALLER_JWT.depotWriteScopes);
    ctx.depot.current = undefined;
    ctx.depot.password = undefined;
    ctx.lifecycle.forget();
    ctx.log.write('INFO', COMPONENT, 'Depot settings deleted');
    await ctx.changed();
    res.status(204).end();
  });
}
