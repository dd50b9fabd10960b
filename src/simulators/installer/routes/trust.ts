import express from 'express';
import { INSTALLER_API, INSTALLER_JWT, TRUSTED_FOR_OUTBOUND } from '../../../constants.js';
import { INSTALLER_READ_SCOPES, INSTALLER_REMEDIATIONS, INSTALLER_SIM_ERROR_CODES } from '../literals.js';
import { ApiError, badRequest } from '../api-error.js';
import type { Authorize } from '../authorize.js';
import type { InstallerSimContext } from '../context.js';
import { BadCertificate, DuplicateCertificate, USAGE_TYPES, type StoredCertificate, type UsageType } from '../trust-store.js';
import { page, readTrustedCertificateSpec, type TrustedCertificateView } from '../wire.js';

const view = ({ alias, certificate }: StoredCertificate): TrustedCertificateView => ({ alias, certificate });

/** The installer's certificate store: list, import, delete. */
export function registerTrustRoutes(app: express.Express, ctx: InstallerSimContext, authorize: Authorize): void {
  const json = express.json({ limit: '1mb' });

  app.get(INSTALLER_API.trustedCertificates, async (req, res) => {
    await authorize(req, INSTALLER_READ_SCOPES);
    res.status(200).json(page(ctx.trust.list().map(view)));
  });

  app.post(INSTALLER_API.trustedCertificates, json, async (req, res) => {
    await authorize(req, INSTALLER_JWT.writeScopes);
    const spec = readTrustedCertificateSpec(req.body);
    if (!spec) throw badRequest('The request body must be a JSON object with a certificate.');
    // certificateUsageType is deprecated in the published spec: absent means outbound.
    const usage = spec.usage ?? TRUSTED_FOR_OUTBOUND;
    if (!USAGE_TYPES.includes(usage as UsageType)) {
      throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.unsupportedUsageType, `certificateUsageType must be one of ${USAGE_TYPES.join(', ')}.`);
    }
    let added;
    try {
      added = ctx.trust.add(spec.certificate, usage as UsageType);
    } catch (err) {
      if (err instanceof BadCertificate) throw new ApiError(400, INSTALLER_SIM_ERROR_CODES.invalidCertificate, err.message, INSTALLER_REMEDIATIONS.certificate);
      if (err instanceof DuplicateCertificate) throw new ApiError(409, INSTALLER_SIM_ERROR_CODES.certificateAlreadyExists, err.message);
      throw err;
    }
    for (const e of added) ctx.log.write('INFO', 'TrustedCertificateService', `Imported certificate ${e.alias} for ${usage}`);
    await ctx.changed();
    res.status(200).json(page(added.map(view)));
  });

  app.delete(`${INSTALLER_API.trustedCertificates}/:alias`, async (req, res) => {
    await authorize(req, INSTALLER_JWT.writeScopes);
    const alias = String(req.params.alias);
    if (!ctx.trust.delete(alias)) {
      // The published spec lists this 404 without a body; the service answers it as its other errors.
      ctx.log.write('WARN', 'TrustedCertificateService', `No trusted certificate has the alias ${alias}`);
      throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.certificateNotFound, `No trusted certificate has the alias ${alias}.`);
    }
    ctx.log.write('INFO', 'TrustedCertificateService', `Deleted certificate ${alias}`);
    await ctx.changed();
    res.status(204).end();
  });
}
