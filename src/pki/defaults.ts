// Defaults the CLI shows in its help; kept apart from the code that needs
// node-forge, so that the CLI can show them without loading it.

/** RSA sizes the toolkit makes; the installer and the management server accept them all. */
export const RSA_KEY_SIZES = [2048, 3072, 4096] as const;
export type RsaKeySize = (typeof RSA_KEY_SIZES)[number];

export const DEFAULT_CA_CN = 'depotkit private CA';
export const DEFAULT_CA_DAYS = 3650;
export const DEFAULT_CA_KEY_SIZE = 3072;
