import type { Request } from 'express';
import { INSTALLER_TOKEN_REFUSED_ERROR_CODE } from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from './literals.js';
import { ApiError } from './api-error.js';
import { TokenRefused, type AccessClaims, type TokenService } from './tokens.js';

/** Checks a request's bearer token and, given a list, that it carries one of those scopes. */
export type Authorize = (req: Request, anyOf?: readonly string[]) => Promise<AccessClaims>;

export function makeAuthorize(tokens: TokenService): Authorize {
  return async (req, anyOf) => {
    let claims: AccessClaims;
    try {
      claims = tokens.verify(req.get('authorization'));
    } catch (err) {
      // The code the vendor's SDK samples refresh and retry on (a token that merely expired is refreshed).
      if (err instanceof TokenRefused) throw new ApiError(401, INSTALLER_TOKEN_REFUSED_ERROR_CODE, err.message, 'Request a new access token.');
      throw err;
    }
    if (anyOf && !claims.scope.some((s) => anyOf.includes(s))) {
      throw new ApiError(403, INSTALLER_SIM_ERROR_CODES.forbidden, `The access token lacks the scope for this operation (one of ${anyOf.join(', ')}).`);
    }
    return claims;
  };
}
