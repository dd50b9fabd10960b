/** File names of the toolkit's certificate folders; nothing else spells them. */

/** A CA folder (`depotkit cert ca --out <dir>`). */
export const CA_KEY_FILE = 'ca-key.pem';
export const CA_CERT_FILE = 'ca-cert.pem';

/** A server folder (`depotkit cert issue --out <dir>`). */
export const SERVER_KEY_FILE = 'server-key.pem';
export const SERVER_CERT_FILE = 'server-cert.pem';
/** The leaf followed by the CA certificate, what a TLS server should send. */
export const SERVER_CHAIN_FILE = 'server-chain.pem';

/** Private keys are readable by their owner only. */
export const PRIVATE_KEY_MODE = 0o600;
export const PUBLIC_FILE_MODE = 0o644;
/** A folder these tools make for a private key: its owner's only, whatever the umask (made with util's makeDir). */
export const PRIVATE_DIR_MODE = 0o700;
