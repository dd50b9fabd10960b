/**
 * Caps on what depotkit reads from files it is given, in one place. Each is
 * far above what the real input holds, and low enough that a hostile or
 * mistaken input is refused in a moment instead of filling memory, the disk
 * or minutes of CPU.
 */

/**
 * The vendor's metadata archive: tens of MB compressed and a few hundred
 * entries (manifest, catalog and .sig, Compatibility data in three places,
 * the vSAN HCL twice, vCenter upgrade metadata). The largest file is the vSAN
 * HCL all.json (tens of MB of JSON). Everything is held in memory before it
 * is laid out, hence the total.
 */
export const METADATA_LIMITS = {
  /** Entries in the archive (its central directory) or files under PROD/ of an extracted folder. */
  maxEntries: 10_000,
  /** Bytes of all the files laid out, uncompressed. */
  maxTotalBytes: 1024 ** 3,
  /**
   * Uncompressed to compressed size, per entry and for the whole archive.
   * JSON compresses about 10 to 30 times with deflate; a zip bomb reaches
   * 1000 (deflate's ceiling), or more by overlapping entries.
   */
  maxCompressionRatio: 200,
  /** Entries smaller than this are not held to the ratio (a tiny file of spaces is harmless). */
  ratioExemptBytes: 1024 ** 2,
} as const;

/**
 * PEM files: a certificate, a chain, a CA folder's certificate, a trust
 * bundle. A system trust bundle (ca-certificates.crt) is about 150
 * certificates in 220 KB; a TLS chain holds 2 to 5 (openssl stops at 100).
 */
export const PEM_LIMITS = {
  maxFileBytes: 4 * 1024 ** 2,
  /** Certificates in a file read as a chain (a leaf and its issuers, or a CA and its issuers). */
  maxChainCertificates: 32,
  /** Blocks in any other PEM file (a trust bundle given with --ca). */
  maxBlocks: 1000,
} as const;

/**
 * An inventory of consumers: a site has a few, a large estate hundreds; 100,000 entries of a name, a URL and
 * a password file take about 10 MiB.
 */
export const INVENTORY_MAX_BYTES = 64 * 1024 ** 2;

/** Password and passphrase files: the first line is the secret. */
export const SECRET_FILE_MAX_BYTES = 4096;

/** X.509 ub-common-name (RFC 5280, appendix A): a CN holds at most 64 characters; openssl refuses more. */
export const MAX_COMMON_NAME_LENGTH = 64;

/** Shortest passphrase accepted to encrypt a CA key (openssl asks for at least 4; 8 is the usual policy floor). */
export const MIN_PASSPHRASE_LENGTH = 8;

/**
 * Bodies read from the network: a server that sends without end (hostile, or
 * a proxy gone wrong) is cut off at these, and the request fails on its own.
 */
export const NETWORK_LIMITS = {
  /**
   * One answer of the installer's or the management server's API: a token
   * pair, the depot settings, a page of trusted certificates (a few KB each,
   * tens of them), a CSR or a certificate chain; all far under 1 MiB.
   */
  apiAnswerBytes: 4 * 1024 ** 2,
  /**
   * A depot metadata file `depotkit check` reads whole: the catalog, the
   * manifest, the Compatibility data or the vSAN HCL (all.json, the largest,
   * is tens of MB).
   */
  depotMetadataBytes: 256 * 1024 ** 2,
  /**
   * An answer whose body is not wanted (an error page, a status probe): this
   * much is read and dropped so the connection can be reused, then it is cut.
   */
  discardBytes: 64 * 1024,
} as const;

/**
 * What `depot mirror` reads of each metadata file an upstream depot serves: a
 * server that sends without end, or far more than the file ever holds, fails
 * at these (a binary's bound is its size in the catalog). Metadata goes to
 * temporary files as it arrives; only the catalog, which is parsed whole, is
 * held in memory.
 */
export const MIRROR_LIMITS = {
  /**
   * productVersionCatalog.json: the vendor's names a few hundred binaries in
   * a few MB; 64 MiB names half a million. Held and parsed in memory.
   */
  catalogBytes: 64 * 1024 ** 2,
  /** The catalog's signature (.sig): one base64 signature, under 1 KB. */
  signatureBytes: 64 * 1024,
  /** vcfManifest.json: the releases and their bills of materials, hundreds of KB. */
  manifestBytes: 16 * 1024 ** 2,
  /** VmwareCompatibilityData.json and its copies under PROD/metadata/Compatibility: a few MB. */
  compatibilityBytes: 64 * 1024 ** 2,
  /** The vSAN HCL all.json and its copy: tens of MB, the largest metadata file. */
  hclBytes: NETWORK_LIMITS.depotMetadataBytes,
  /** lastupdatedtime.json: one timestamp. */
  hclTimestampBytes: 64 * 1024,
  /** One file of the vCenter upgrade metadata (upgrade_info.xml, its .sig, its .sha256): a few KB. */
  upgradeMetadataBytes: 4 * 1024 ** 2,
  /** The server's status (JSON) or its listing of the upgrade metadata folder, which name at most 10,000 files. */
  listingBytes: 8 * 1024 ** 2,
  /** All the metadata of one mirror: what a metadata archive may hold at most. */
  totalMetadataBytes: METADATA_LIMITS.maxTotalBytes,
} as const;

/**
 * What `depot unpack` reads whole from transfer media, which come from
 * outside: a FIFO, a device or a huge file named like one of these is refused
 * at the bound instead of hanging the run or filling memory.
 */
export const PACK_LIMITS = {
  /**
   * depot-pack.json: about 550 bytes per file carried (its entry, its pieces
   * and its line in the tree). A real depot's is under 1 MiB (tens to a few
   * thousand files); 200,000 tiny binaries make about 110 MiB, the most a
   * catalog is expected to name. Parsed whole in memory.
   */
  manifestBytes: 256 * 1024 ** 2,
  /** SHA256SUMS: a line of about 90 bytes per volume, and three more; 100,000 volumes take 9 MiB. */
  sumsBytes: 16 * 1024 ** 2,
  /** depot-pack.json.sig: a JSON object of under 1 KiB. */
  signatureBytes: 64 * 1024,
  /**
   * The catalog the pack carries, read from its volume and parsed before
   * anything is placed: the vendor's is a few MB; 64 MiB names half a million
   * binaries.
   */
  catalogBytes: 64 * 1024 ** 2,
} as const;

/** The ESXi software depot's documents, read whole before they are parsed. */
export const ESX_LIMITS = {
  /**
   * A root or vendor index: a few KB (the vendor's lists one metadata zip per product, version and
   * channel, tens of entries).
   */
  indexBytes: 4 * 1024 ** 2,
  /**
   * A metadata zip: the vendor's largest, which describe every patch of a major release, are tens
   * of MB. Held in memory while it is read.
   */
  metadataZipBytes: 512 * 1024 ** 2,
} as const;
