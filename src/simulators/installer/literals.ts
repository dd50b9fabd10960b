/**
 * The installer simulator's own choices, where nothing public documents what
 * the installer answers: error codes, remediation texts, its default version.
 * Clients must not rely on them; the real systems' literals are in src/constants.ts.
 */

/**
 * Codes the simulator answers where nothing public documents the installer's
 * own: the simulator's choice, not the vendor's (those few documented are in
 * INSTALLER_ERROR_CODES). Clients must not rely on them.
 */
export const INSTALLER_SIM_ERROR_CODES = {
  invalidCredentials: 'INVALID_CREDENTIALS',
  forbidden: 'FORBIDDEN',
  certificateAlreadyExists: 'TRUSTED_CERTIFICATE_ALREADY_EXISTS',
  certificateNotFound: 'TRUSTED_CERTIFICATE_NOT_FOUND',
  invalidCertificate: 'INVALID_CERTIFICATE',
  refreshTokenNotFound: 'REFRESH_TOKEN_NOT_FOUND',
  badRequest: 'BAD_REQUEST',
  notFound: 'NOT_FOUND',
  internal: 'INTERNAL_SERVER_ERROR',
  unsupportedUsageType: 'UNSUPPORTED_CERTIFICATE_USAGE_TYPE',
  invalidDepotSettings: 'INVALID_DEPOT_SETTINGS',
  depotMetadataUnreadable: 'DEPOT_METADATA_UNREADABLE',
  depotNotConfigured: 'DEPOT_NOT_CONFIGURED',
  releaseNotFound: 'RELEASE_NOT_FOUND',
  bundleNotFound: 'BUNDLE_NOT_FOUND',
  bundleDownloadInProgress: 'BUNDLE_DOWNLOAD_IN_PROGRESS',
  invalidBundleSpec: 'INVALID_BUNDLE_DOWNLOAD_SPEC',
} as const;

/** Remediation texts of the simulated installer's depot errors. */
export const INSTALLER_REMEDIATIONS = {
  depotInvalidCredential: 'Check the depot user name and password.',
  depotUnknownHost: 'Check the depot host name, or add it to the hosts file of the installer.',
  depotNotAvailable: 'Check that the depot server is running and serves the depot tree at its root.',
  invalidCredentials: 'Check the user name and password.',
  certificate: 'Provide one or more PEM encoded X.509 certificates.',
  depotUserNotSet: 'Set offlineAccount.username and password; when the depot does not enforce Basic auth, any user name and password may be supplied.',
} as const;

/** Value the masked password is replaced with in every log line. */
export const INSTALLER_PASSWORD_MASK = '*****';

/** The simulated installer's version when none is given; 9.1 and later accept the depot `url` field. */
export const INSTALLER_SIM_DEFAULT_VERSION = '9.1.0.0.25368698';

/** Scopes that allow reading the certificate store (the documented token carries CERT_READ and CA_READ). */
export const INSTALLER_READ_SCOPES = ['CERT_READ', 'CA_READ'] as const;
