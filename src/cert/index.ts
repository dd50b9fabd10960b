// Certificates: a private CA, server certificates with SANs, CSR signing, inspection and lint.
export {
  CA_KEY_FILE,
  CA_CERT_FILE,
  SERVER_KEY_FILE,
  SERVER_CERT_FILE,
  SERVER_CHAIN_FILE,
  PRIVATE_KEY_MODE,
  PUBLIC_FILE_MODE,
  PRIVATE_DIR_MODE,
} from './files.js';
export { splitPemBlocks, normalizePem, readPemFile, readPemBlocks, encodePem, parsePemBlocks, type PemBlock } from './pem.js';
export { generateKeyPem, parsePrivateKey, encryptKeyPem, assertNewPassphrase, RSA_KEY_SIZES, type RsaKeySize } from './keys.js';
export { createCa, loadCaDir, writeCaDir, openCa, DEFAULT_CA_CN, DEFAULT_CA_DAYS, DEFAULT_CA_KEY_SIZE, type CaMaterial } from './ca.js';
export { issueServerCert, writeServerDir, type ServerMaterial, type IssueOptions } from './issue.js';
export { issueCert, signCsrFile, type SigningCa, type IssuedServerDir, type SignedCsrFile } from './issue-dir.js';
export { renewCert, type RenewOptions, type RenewedServerDir } from './renew.js';
export { generateCsr, signCsr, readCsr, inspectCsr, type CsrOptions, type CsrInfo } from './csr.js';
export { lintServerCertificate, type LintOptions } from './lint.js';
export { LINT_RULES, type LintRule, type LintContext } from './lint-rules.js';
export { chainVerdict, type ChainVerdict } from './lint-chain.js';
export { keptAttributes, GROUP_KEY_MODE, type KeptAttributes } from './replaced-files.js';
export { CA_PROFILE, SERVER_PROFILE, KEY_USAGE_TITLES, type CertificateProfile, type ServerProfile, type KeyUsage, type ExtKeyUsage } from './profiles.js';
export { selfSignedServerCertificate } from './self-signed.js';
export { readCaPems } from './trust-source.js';
export { Certificate, readCertificate, readCertificates, sha256Fingerprint, findByFingerprint, certificateCoversHost, daysLeft } from './certificate.js';
export { issuerPath, pathToRoot } from './chain.js';
export { formatSan, certificateLines, inspectionLines, requestLines } from './inspect-lines.js';
