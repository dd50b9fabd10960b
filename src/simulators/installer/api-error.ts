import { randomBytes } from 'node:crypto';
import { INSTALLER_ERROR_TYPE } from '../../constants.js';
import { INSTALLER_SIM_ERROR_CODES } from './literals.js';
import type { ErrorBody } from './wire.js';

/** A refusal the simulated installer answers with its error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly remediation?: string,
    readonly causes: Array<{ type: string; message: string }> = [],
    /** The body as a real installer returned it for this failure, fields it left out omitted. */
    readonly observed?: { arguments: string[] },
  ) {
    super(message);
  }
}

export function errorBody(error: ApiError): Partial<ErrorBody> {
  const referenceToken = randomBytes(3).toString('hex').toUpperCase();
  const remediation = error.remediation ? { remediationMessage: error.remediation } : {};
  if (error.observed) {
    // The depot connection failure of a 9.0.1 installer carries no errorType, context or nestedErrors.
    return { errorCode: error.errorCode, arguments: error.observed.arguments, message: error.message, ...remediation, causes: error.causes, referenceToken };
  }
  return {
    errorCode: error.errorCode,
    errorType: INSTALLER_ERROR_TYPE,
    arguments: [],
    context: {},
    message: error.message,
    ...remediation,
    causes: error.causes,
    nestedErrors: [],
    referenceToken,
  };
}

export const badRequest = (message: string): ApiError => new ApiError(400, INSTALLER_SIM_ERROR_CODES.badRequest, message);
