import express, { type NextFunction, type Request, type Response } from 'express';
import { INSTALLER_API } from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from './literals.js';
import { ApiError, badRequest, errorBody } from './api-error.js';
import { makeAuthorize } from './authorize.js';
import type { InstallerSimContext } from './context.js';
import { registerBundleRoutes } from './routes/bundles.js';
import { registerDepotSettingsRoutes } from './routes/depot-settings.js';
import { registerReleaseRoutes } from './routes/releases.js';
import { registerSyncRoutes } from './routes/sync.js';
import { registerTokenRoutes } from './routes/tokens.js';
import { registerTrustRoutes } from './routes/trust.js';
import { isObject } from './wire.js';

/** The installer API on express: tokens, trusted certificates, depot settings and what follows them, appliance info. */
export function installerApp(ctx: InstallerSimContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use((req, res, next) => {
    res.on('finish', () => ctx.log.write('INFO', 'http', `${req.method} ${req.path} ${res.statusCode}`));
    next();
  });

  const authorize = makeAuthorize(ctx.tokens);
  registerTokenRoutes(app, ctx);
  registerTrustRoutes(app, ctx, authorize);
  registerDepotSettingsRoutes(app, ctx, authorize);
  // No token needed: deployment scripts poll it as the appliance's readiness probe.
  app.get(INSTALLER_API.applianceInfo, (_req, res) => {
    res.status(200).json({ role: ctx.role, version: ctx.version });
  });
  registerSyncRoutes(app, ctx, authorize);
  registerReleaseRoutes(app, ctx, authorize);
  registerBundleRoutes(app, ctx, authorize);

  app.use((req) => {
    throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.notFound, `No operation at ${req.method} ${req.path}.`);
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const error = apiErrorOf(err, ctx);
    res.status(error.status).json(errorBody(error));
  });
  return app;
}

/** What a failure answers: its own refusal, a 400 for a body that is not JSON, else a logged 500. */
function apiErrorOf(err: unknown, ctx: InstallerSimContext): ApiError {
  if (err instanceof ApiError) return err;
  if (isObject(err) && (err.type === 'entity.parse.failed' || err.type === 'entity.too.large')) return badRequest('The request body is not valid JSON.');
  ctx.log.write('ERROR', 'http', `Internal error: ${err instanceof Error ? err.message : String(err)}`);
  return new ApiError(500, INSTALLER_SIM_ERROR_CODES.internal, 'Internal error in the simulator.');
}
