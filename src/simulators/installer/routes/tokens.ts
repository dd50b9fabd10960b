import express, { type Request } from 'express';
import { INSTALLER_API } from '../../../constants.js';
import { INSTALLER_REMEDIATIONS, INSTALLER_SIM_ERROR_CODES } from '../literals.js';
import { ApiError, badRequest } from '../api-error.js';
import type { InstallerSimContext } from '../context.js';
import { checkPassword } from '../tokens.js';
import { readRefreshId, readTokenRequest } from '../wire.js';

function refreshIdOf(req: Request): string {
  const id = readRefreshId(typeof req.body === 'string' ? req.body : '');
  if (!id) throw badRequest('The request body must be the refresh token id.');
  return id;
}

/** Log-in, refresh and log-out. */
export function registerTokenRoutes(app: express.Express, ctx: InstallerSimContext): void {
  const json = express.json({ limit: '1mb' });
  // The refresh token id comes quoted (JSON) or raw, with any content type.
  const raw = express.text({ type: () => true, limit: '4kb' });

  app.post(INSTALLER_API.tokens, json, async (req, res) => {
    const spec = readTokenRequest(req.body);
    if (!spec) throw badRequest('The token request needs a username and a password.');
    if (!checkPassword(ctx.users, spec.username, spec.password)) {
      throw new ApiError(401, INSTALLER_SIM_ERROR_CODES.invalidCredentials, 'Invalid username or password.', INSTALLER_REMEDIATIONS.invalidCredentials);
    }
    // Real installers answer 200 (field clients use the token only then); the published spec says 201.
    res.status(200).json(ctx.tokens.issuePair(spec.username));
    await ctx.changed();
  });

  app.patch(INSTALLER_API.refreshAccessToken, raw, async (req, res) => {
    const token = ctx.tokens.refresh(refreshIdOf(req));
    if (!token)
      throw new ApiError(404, INSTALLER_SIM_ERROR_CODES.refreshTokenNotFound, 'The refresh token is not known or has expired.', 'Request a new token pair.');
    res.status(200).json(token);
  });

  app.delete(INSTALLER_API.refreshToken, raw, async (req, res) => {
    // Revoking an unknown id is not an error: the token is gone either way.
    if (ctx.tokens.revoke(refreshIdOf(req))) await ctx.changed();
    res.status(204).end();
  });
}
