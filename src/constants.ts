/**
 * Every literal of the external interfaces lives here: depot paths, component
 * names, installer and management-server API paths, headers, error codes.
 * What each is and where it is documented: docs/interfaces.md.
 * Nothing else in the code base spells these values.
 */

// ---------------------------------------------------------------- depot tree

export const DEPOT_ROOT_DIR = 'PROD';

/** Paths relative to the folder that contains PROD/ (the web root). */
export const DEPOT_PATHS = {
  comp: 'PROD/COMP',
  manifest: 'PROD/metadata/manifest/v1/vcfManifest.json',
  catalog: 'PROD/metadata/productVersionCatalog/v1/productVersionCatalog.json',
  catalogSig: 'PROD/metadata/productVersionCatalog/v1/productVersionCatalog.sig',
  hclAll: 'PROD/vsan/hcl/all.json',
  hclLastUpdated: 'PROD/vsan/hcl/lastupdatedtime.json',
  hclDir: 'PROD/vsan/hcl',
  compatibility: 'PROD/COMP/SDDC_MANAGER_VCF/Compatibility/VmwareCompatibilityData.json',
  /** Extra copies the vendor's metadata archive carries. */
  metadataCompatibilityDirs: ['PROD/metadata/Compatibility/v1', 'PROD/metadata/Compatibility/v2'],
  metadataHclDir: 'PROD/metadata/vsan/hcl',
} as const;

/**
 * vCenter upgrade metadata the vendor's metadata archive carries, one folder
 * per upgrade: PROD/COMP/VCENTER/vmw/<uuid>/<file>.
 */
export const VCENTER_UPGRADE_METADATA_DIR = 'PROD/COMP/VCENTER/vmw';
export const VCENTER_UPGRADE_METADATA_FILES = ['upgrade_info.xml', 'upgrade_info.sig', 'upgrade_info.xml.sha256'] as const;

/** Folder of a component's binaries, relative to the web root. */
export function componentDir(component: string): string {
  return `${DEPOT_PATHS.comp}/${component}`;
}

/** The seven component folders the installer's documentation names: its minimum. */
export const REQUIRED_COMPONENTS = ['NSX_T_MANAGER', 'SDDC_MANAGER_VCF', 'VCENTER', 'VCF_OPS_CLOUD_PROXY', 'VRA', 'VROPS', 'VRSLCM'] as const;

export const COMPONENTS_9_0 = [
  'ESX_HOST',
  'HCX',
  'NSX_T_MANAGER',
  'SDDC_MANAGER_VCF',
  'VCENTER',
  'VCFDT',
  'VCF_OPS_CLOUD_PROXY',
  'VIDB',
  'VMTOOLS',
  'VRA',
  'VRLI',
  'VRNI',
  'VRO',
  'VROPS',
  'VRSLCM',
  'VSAN_FILE_SERVICES',
] as const;

/** 9.1 drops VRSLCM and adds the fleet services. */
export const COMPONENTS_9_1 = [
  ...COMPONENTS_9_0.filter((c) => c !== 'VRSLCM'),
  'DEPOT_SERVICE',
  'TELEMETRY_ACCEPTOR',
  'VCF_FLEET_LCM',
  'VCF_SDDC_LCM',
  'VCF_SALT',
  'VCF_SALT_RAAS',
  'VCF_SERVICE_VCD_MIGRATION_BACKEND',
  'VCF_LICENSE_SERVER',
  'VSP',
] as const;

export const RELEASES = ['9.0', '9.1'] as const;
export type Release = (typeof RELEASES)[number];

export function componentsOf(release: Release): readonly string[] {
  return release === '9.0' ? COMPONENTS_9_0 : COMPONENTS_9_1;
}

/** Every component name the toolkit knows, for misspelling suggestions. */
export const KNOWN_COMPONENTS: readonly string[] = [...new Set<string>([...COMPONENTS_9_0, ...COMPONENTS_9_1])].sort();

/**
 * The name the installer's API gives a component whose depot folder (and catalog key) differs:
 * SDDC Manager's binaries sit under SDDC_MANAGER_VCF, but release components, download status
 * and bundles name it SDDC_MANAGER (the vendor's Python SDK download samples and Ansible
 * collection select it by that name). Any other component keeps its folder's name.
 */
export const API_COMPONENT_NAMES: Readonly<Record<string, string>> = { SDDC_MANAGER_VCF: 'SDDC_MANAGER' };

/** The installer API's name of the component catalogued (and foldered) as `catalogKey`. */
export function apiComponentName(catalogKey: string): string {
  return API_COMPONENT_NAMES[catalogKey] ?? catalogKey;
}

/** The catalog's bundle types. */
export const BUNDLE_TYPES = ['INSTALL', 'PATCH'] as const;

/** HCL files older than this are reported as rejected (third-party report). */
export const HCL_MAX_AGE_DAYS = 90;

/** Prefix of every temporary file the toolkit writes; never served, never left behind. */
export const TEMP_PREFIX = '.depotkit-tmp-';

// ----------------------------------------------------------- installer API

export const INSTALLER_API = {
  tokens: '/v1/tokens',
  refreshAccessToken: '/v1/tokens/access-token/refresh',
  refreshToken: '/v1/tokens/refresh-token',
  trustedCertificates: '/v1/sddc-manager/trusted-certificates',
  depotSettings: '/v1/system/settings/depot',
  depotSyncInfo: '/v1/system/settings/depot/depot-sync-info',
  depotMachineDetails: '/v1/system/settings/depot/machine-details',
  applianceInfo: '/v1/system/appliance-info',
  releases: '/v1/releases',
  /** `{sku}`: the product, e.g. VCF. */
  releaseComponents: '/v1/releases/{sku}/release-components',
  bundles: '/v1/bundles',
  bundle: '/v1/bundles/{id}',
  bundleDownloadStatus: '/v1/bundles/download-status',
} as const;

/** An API path with its `{name}` parameters filled in (URL-encoded). */
export function apiPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** Product SKUs whose releases the installer lists (the lab-deployment script's VCFInstallerProductSKU). */
export const INSTALLER_PRODUCT_SKUS = ['VCF', 'VVF'] as const;

/** Depot metadata sync states clients wait for (the vendor's SDK samples poll for these two). */
export const DEPOT_SYNC_STATUS = { synced: 'SYNCED', failed: 'SYNC_FAILED' } as const;

/** Bundle download states: PENDING until asked for, then SCHEDULED, INPROGRESS, VALIDATING, SUCCESS or FAILED. */
export const BUNDLE_DOWNLOAD_STATUS = {
  pending: 'PENDING',
  scheduled: 'SCHEDULED',
  inProgress: 'INPROGRESS',
  validating: 'VALIDATING',
  success: 'SUCCESS',
  failed: 'FAILED',
} as const;
export type BundleDownloadStatus = (typeof BUNDLE_DOWNLOAD_STATUS)[keyof typeof BUNDLE_DOWNLOAD_STATUS];
/** Bundle download states that end a download. */
export const BUNDLE_DOWNLOAD_FINAL: readonly string[] = [BUNDLE_DOWNLOAD_STATUS.success, BUNDLE_DOWNLOAD_STATUS.failed];

/** `imageType` of the release and download-status queries. */
export const INSTALLER_IMAGE_TYPES = ['INSTALL', 'UPGRADE'] as const;

export const TRUSTED_FOR_OUTBOUND = 'TRUSTED_FOR_OUTBOUND';
export const TRUSTED_FOR_INBOUND = 'TRUSTED_FOR_INBOUND';

export const INSTALLER_DEFAULT_USER = 'admin@local';

/** JWT details of the vendor's sample token. */
export const INSTALLER_JWT = {
  alg: 'HS256',
  iss: 'vcf-auth',
  aud: 'sddc-services',
  lifetimeSeconds: 3600,
  refreshLifetimeSeconds: 24 * 3600,
  scopes: ['CERT_READ', 'CERT_WRITE', 'CA_READ', 'CA_WRITE', 'DEPOT_READ', 'DEPOT_WRITE', 'SYSTEM_READ'],
  writeScopes: ['CA_WRITE', 'CERT_WRITE'],
  /** Scopes that allow changing the depot settings. */
  depotWriteScopes: ['DEPOT_WRITE', 'SYSTEM_WRITE'],
  role: 'ADMIN',
} as const;

/** The documented alias: `<prefix>_<name from the certificate>_<64 hex>`. */
export const TRUSTED_CERT_ALIAS_PREFIX = 'vcf';

export const DEPOT_STATUS = {
  unknownHost: 'DEPOT_UNKNOWN_HOST',
  notAvailable: 'DEPOT_NOT_AVAILABLE',
  userNotSet: 'DEPOT_USER_NOT_SET',
  invalidCredential: 'DEPOT_INVALID_CREDENTIAL',
  unknownFailure: 'UNKNOWN_FAILURE',
  connectionSuccessful: 'DEPOT_CONNECTION_SUCCESSFUL',
} as const;
export type DepotStatus = (typeof DEPOT_STATUS)[keyof typeof DEPOT_STATUS];

/**
 * The installer's documented error codes: the depot connection failure, the
 * depot statuses (which come back as errorCode too) and the sync and bundle codes
 * public automation keys on.
 */
export const INSTALLER_ERROR_CODES = {
  depotConnectFailure: 'VMWARE_DEPOT_CONNECT_FAILURE',
  depotInvalidCredential: DEPOT_STATUS.invalidCredential,
  depotUnknownHost: DEPOT_STATUS.unknownHost,
  depotNotAvailable: DEPOT_STATUS.notAvailable,
  depotUserNotSet: DEPOT_STATUS.userNotSet,
  /** A bundle asked for again once downloaded; field clients take it as done. */
  bundleAlreadyDownloaded: 'BUNDLE_DOWNLOAD_ALREADY_DOWNLOADED',
  /** A bundle asked for again whose download was asked for and has not ended (the vendor's Python SDK download sample ignores it). */
  bundleAlreadyScheduled: 'BUNDLE_DOWNLOAD_ALREADY_SCHEDULED',
  /** A bundle asked for again while it is being validated (the same sample ignores it). */
  bundleNotAvailable: 'BUNDLE_DOWNLOAD_NOT_AVAILABLE',
  /** A depot sync that finds no manifest. */
  manifestNotFound: 'LCM_MANIFEST_NOT_FOUND',
  /** Deployment validation when a bundle's binaries could not be fetched or validated. */
  componentBinaryNotRetrieved: 'FAILED_TO_RETRIEVE_COMPONENT_BINARY',
} as const;

export const INSTALLER_MESSAGES = {
  depotConnectFailure:
    'Failed to connect to VMware depot with the provided user credentials. Cause: Secure protocol communication error, check logs for more details.',
  /** The failure's `arguments[0]` and `causes[0].message`, as a 9.0.1 installer returned them (vmware/Holodeck#67). */
  depotConnectFailureCause: 'Secure protocol communication error, check logs for more details',
  depotConnectFailureRemediation: 'Please verify the depot credentials for user are correct, check your connection to the depot and try command again.',
  secureProtocolError: 'Secure protocol communication error',
  /** A depot sync without the Compatibility data. */
  compatibilityDownloadFailed: 'Vmware compatibility data download failed',
  /** The Java cause when the depot's CA is not in the installer's store (Java's PKIX message). */
  untrustedPath: 'unable to find valid certification path',
  /** What 9.1 and later ask of a depot `url` that has a query or a fragment (third-party notes, a 9.1.1 log). */
  depotUrlNoQueryOrFragment: 'a valid URL without query parameters or fragments',
  /** How 9.1.1 names credentials written into a depot `url` (user:password@host). */
  depotUrlUserinfo: 'deprecated userinfo component',
} as const;

/** Java exception types the installer names in `causes[].type`. */
export const INSTALLER_EXCEPTION_TYPES = {
  depotConnectionFailure: 'com.vmware.evo.sddc.lcm.model.depot.exception.DepotConnectionFailureException',
} as const;

export const APPLIANCE_ROLES = { installer: 'VcfInstaller', manager: 'SddcManager' } as const;
/** A consumer's role as depotkit names it (inventories, the simulator's `role`) to the role appliance-info answers. */
export const CONSUMER_ROLES = { installer: APPLIANCE_ROLES.installer, 'sddc-manager': APPLIANCE_ROLES.manager } as const;
export type ConsumerRole = keyof typeof CONSUMER_ROLES;
/**
 * A vCenter in the inventory of consumers: it takes the ESX depot through vLCM, not the depot API
 * the others share, and has no appliance-info; its rows name this role.
 */
export const VCENTER_ROLE = 'vcenter';
/** The roles an inventory entry may give: the depot API's consumers, and vCenters. */
export const INVENTORY_ROLES = [...(Object.keys(CONSUMER_ROLES) as ConsumerRole[]), VCENTER_ROLE] as const;
export type InventoryRole = ConsumerRole | typeof VCENTER_ROLE;
/** SDDC Manager's administrator: the SSO domain's built-in account. */
export const SDDC_MANAGER_DEFAULT_USER = 'administrator@vsphere.local';

// -------------------------------------------------- management server API

export const MGMT_HEADERS = {
  sessionId: 'vmware-api-session-id',
  useHeaderAuthn: 'vmware-use-header-authn',
} as const;

export const MGMT_API = {
  rest: {
    session: '/rest/com/vmware/cis/session',
    tlsCsr: '/rest/vcenter/certificate-management/vcenter/tls-csr',
    tls: '/rest/vcenter/certificate-management/vcenter/tls',
    trustedRootChains: '/rest/vcenter/certificate-management/vcenter/trusted-root-chains',
  },
  api: {
    session: '/api/session',
    tlsCsr: '/api/vcenter/certificate-management/vcenter/tls-csr',
    tls: '/api/vcenter/certificate-management/vcenter/tls',
    trustedRootChains: '/api/vcenter/certificate-management/vcenter/trusted-root-chains',
  },
} as const;
export type MgmtApiGeneration = keyof typeof MGMT_API;

/** /rest error types are `com.vmware.vapi.std.errors.<kind>`. */
export const MGMT_REST_ERROR_PREFIX = 'com.vmware.vapi.std.errors.';

export const MGMT_ERROR_TYPES = {
  invalidArgument: 'INVALID_ARGUMENT',
  unauthenticated: 'UNAUTHENTICATED',
  notFound: 'NOT_FOUND',
  alreadyExists: 'ALREADY_EXISTS',
  operationNotFound: 'OPERATION_NOT_FOUND',
  error: 'ERROR',
} as const;

/**
 * vAPI JSON-RPC 2.0, the only transport of the vSphere Automation SDK for Python: one `POST /api`
 * per call, `{"jsonrpc": "2.0", "method": "invoke", "params": {"serviceId", "operationId",
 * "input", "ctx": {"appCtx", "securityCtx"}}, "id"}` (the runtime's
 * JSON-RPC de/serializer in vmware-vapi-runtime, VAPIJsonEncoder and JsonRpcDictToVapi; the Go vAPI
 * runtime's tests show the same request).
 * Values are typed in the envelope: a structure is `{"STRUCTURE": {"<name>": {fields}}}`, an
 * optional `{"OPTIONAL": value|null}`, a secret `{"SECRET": "..."}`, an error
 * `{"ERROR": {"com.vmware.vapi.std.errors.<kind>": {fields}}}`; a result is `{"output": value}`
 * or `{"error": errorValue}`, and a failure of the envelope itself a JSON-RPC `error` with `code`.
 */
export const MGMT_JSONRPC = {
  path: '/api',
  version: '2.0',
  method: 'invoke',
  /** The operation's own input structure, whose fields are the operation's parameters. */
  inputStructure: 'operation-input',
  types: { structure: 'STRUCTURE', optional: 'OPTIONAL', secret: 'SECRET', error: 'ERROR' },
  /** The JSON-RPC 2.0 error codes the runtime defines. */
  codes: { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internalError: -32603 },
  schemes: { userPass: 'com.vmware.vapi.std.security.user_pass', sessionId: 'com.vmware.vapi.std.security.session_id' },
  services: {
    session: 'com.vmware.cis.session',
    tls: 'com.vmware.vcenter.certificate_management.vcenter.tls',
    tlsCsr: 'com.vmware.vcenter.certificate_management.vcenter.tls_csr',
    trustedRootChains: 'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains',
  },
  /** Structure names of the bindings (com.vmware.vcenter.certificate_management.vcenter_client, vapi std). */
  structures: {
    tlsInfo: 'com.vmware.vcenter.certificate_management.vcenter.tls.info',
    tlsCsrInfo: 'com.vmware.vcenter.certificate_management.vcenter.tls_csr.info',
    chainSummary: 'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains.summary',
    chainInfo: 'com.vmware.vcenter.certificate_management.vcenter.trusted_root_chains.info',
    certChain: 'com.vmware.vcenter.certificate_management.x509_cert_chain',
    message: 'com.vmware.vapi.std.localizable_message',
  },
} as const;

/** CSR key sizes the management server accepts; 3072 is the newer default. */
export const MGMT_CSR_KEY_SIZES = [2048, 3072, 4096] as const;
export const MGMT_CSR_DEFAULT_KEY_SIZE = 3072;
/** Validity of a certificate made from a server-generated CSR. */
export const MGMT_CSR_VALIDITY_DAYS = 730;

/**
 * vCenter's vSphere Lifecycle Manager (vLCM) depot API, on the /api generation only (the vSphere
 * Automation API reference, `esx/settings/depots` and `cis/tasks`): online depots are the URLs of
 * root indexes, the one UMDS depot replaces them all when it is set and enabled, an offline depot
 * is a bundle pulled from a URL; a sync fetches the metadata of every enabled depot as a task.
 */
/** The appliance's version (`GET`: `{version, build, product, ...}`): what a vCenter's report row names. */
export const MGMT_APPLIANCE_VERSION_PATH = '/api/appliance/system/version';

export const VLCM_API = {
  online: '/api/esx/settings/depots/online',
  umds: '/api/esx/settings/depots/umds',
  offline: '/api/esx/settings/depots/offline',
  depots: '/api/esx/settings/depots',
  tasks: '/api/cis/tasks',
  content: '/api/esx/settings/depot-content',
  /** The depot content kinds, each listed at `content/<kind>`. */
  contentKinds: ['base-images', 'add-ons', 'components'],
  /** The query of an operation run as a task: its answer is the task's id. */
  taskQuery: 'vmw-task',
  syncAction: 'sync',
  /** Offline depot sources: pulled from a URL, or pushed as an uploaded file. */
  sourceTypes: { pull: 'PULL', push: 'PUSH' },
} as const;
export type VlcmContentKind = (typeof VLCM_API.contentKinds)[number];

/** A task's status (the reference's Cis Task Status). */
export const CIS_TASK_STATUS = { pending: 'PENDING', running: 'RUNNING', blocked: 'BLOCKED', succeeded: 'SUCCEEDED', failed: 'FAILED' } as const;
export type CisTaskStatus = (typeof CIS_TASK_STATUS)[keyof typeof CIS_TASK_STATUS];

/** The one sentence vCenter shows for a depot whose sync failed (the vSphere Client's message). */
export const VLCM_DEPOT_INACCESSIBLE = 'A depot is inaccessible or has invalid contents';
/**
 * How a TLS refusal of a depot's certificate reads in vLCM's sync error (KB 396511 quotes the
 * first in "self-signed certificate in certificate chain"; the others are OpenSSL's words for an issuer not trusted): what tells the client the
 * depot's CA is not among vCenter's trusted root chains.
 */
export const VLCM_UNTRUSTED_CA_WORDS = [
  'self-signed certificate',
  'self signed certificate',
  'unable to get local issuer certificate',
  'unable to verify the first certificate',
] as const;
/** Python's ssl words (vLCM's depot client) for a certificate that does not name the depot's host. */
export const VLCM_HOSTNAME_MISMATCH_WORDS = 'Hostname mismatch';

// ------------------------------------------------- vendor binary naming

/** The size of each synthetic binary of a demo depot unless told otherwise (1 MiB: a lab depot made in seconds). */
export const DEFAULT_DEMO_BINARY_SIZE = 1 << 20;

/**
 * The vendor's file-name pattern for each component's main binary, with
 * `{v}` for the full version (e.g. 9.0.0.0.24755229). Demo depots use them so
 * that a lab depot looks like a real one.
 */
export const BINARY_NAME_PATTERNS: Readonly<Record<string, readonly string[]>> = {
  ESX_HOST: ['VMware-VMvisor-Installer-{v}.x86_64.iso'],
  HCX: ['VMware-HCX-Connector-{v}.ova'],
  NSX_T_MANAGER: ['nsx-unified-appliance-{v}.ova'],
  SDDC_MANAGER_VCF: ['VCF-SDDC-Manager-Appliance-{v}.ova'],
  VCENTER: ['VMware-VCSA-all-{v}.iso'],
  VCFDT: ['vcf-download-tool-{v}.tar.gz'],
  VCF_OPS_CLOUD_PROXY: ['Operations-Cloud-Proxy-{v}.ova'],
  VIDB: ['vidb-appliance-{v}.ova'],
  VMTOOLS: ['VMware-Tools-windows-{v}.zip'],
  VRA: ['vmsp-vcfa-combined-{v}.tar'],
  VRLI: ['Operations-for-Logs-Appliance-{v}.ova'],
  VRNI: ['Operations-for-Networks-Appliance-{v}.ova'],
  VRO: ['O11N_VA-{v}.ova'],
  VROPS: ['Operations-Appliance-{v}.ova'],
  VRSLCM: ['VCF-OPS-Lifecycle-Manager-Appliance-{v}.ova'],
  VSAN_FILE_SERVICES: ['VMware-vSAN-File-Services-Appliance-{v}.ova'],
  // 9.1 fleet services ship as a yaml descriptor plus a tgz image set.
  DEPOT_SERVICE: ['depot-service-{v}.yaml', 'depot-service-{v}.tgz'],
  TELEMETRY_ACCEPTOR: ['telemetry-acceptor-{v}.yaml', 'telemetry-acceptor-{v}.tgz'],
  VCF_FLEET_LCM: ['vcf-fleet-lcm-{v}.yaml', 'vcf-fleet-lcm-{v}.tgz'],
  VCF_SDDC_LCM: ['vcf-sddc-lcm-{v}.yaml', 'vcf-sddc-lcm-{v}.tgz'],
  VCF_SALT: ['vcf-salt-{v}.yaml', 'vcf-salt-{v}.tgz'],
  VCF_SALT_RAAS: ['vcf-salt-raas-{v}.yaml', 'vcf-salt-raas-{v}.tgz'],
  VCF_SERVICE_VCD_MIGRATION_BACKEND: ['vcd-migration-backend-{v}.yaml', 'vcd-migration-backend-{v}.tgz'],
  VCF_LICENSE_SERVER: ['vcf-license-server-{v}.yaml', 'vcf-license-server-{v}.tgz'],
  VSP: ['vsp-{v}.yaml', 'vsp-{v}.tgz'],
};

// ------------------------------------------------------------ certificates

/** Default validity of a server certificate: the most browsers accept, and the installer too. */
export const SERVER_CERT_DEFAULT_DAYS = 825;
/** Smallest RSA key the installer and the management server accept. */
export const INSTALLER_MIN_RSA_BITS = 2048;

// ------------------------------------ management server: simulator and client

/** Value the client sends in MGMT_HEADERS.useHeaderAuthn, as the vendor's examples do. */
export const MGMT_USE_HEADER_AUTHN_VALUE = 'true';

/** The management server's built-in SSO administrator: the simulator's default user. */
export const MGMT_DEFAULT_USER = 'administrator@vsphere.local';

/** The private-key field of the replace request, as the vendor's API reference names it. */
export const MGMT_TLS_KEY_FIELD = 'key';

/** The real server's words when root_cert does not end in a self-signed root (Java's PKIX check). */
export const MGMT_TRUST_ANCHORS_MESSAGE = 'the trustAnchors parameter must be non-empty';

/**
 * The session cookie: it has the session header's name. Clients in the curl -c/-b style keep the
 * session in it instead of the header; govmomi's vcsim accepts it too.
 */
export const MGMT_SESSION_COOKIE = MGMT_HEADERS.sessionId;
/**
 * WWW-Authenticate of every 401, and the `challenge` of the error body: the Basic part of the
 * vendor's documented example challenge. PowerShell's -Credential sends credentials only after it.
 */
export const MGMT_BASIC_REALM = 'vCenter';
export const MGMT_BASIC_CHALLENGE = `Basic realm="${MGMT_BASIC_REALM}"`;

// ------------------------------------------------------------ serve

/** Realm of the Basic auth challenge. */
export const SERVE_AUTH_REALM = 'depot';
/** The one content type the depot's metadata is served with; everything else is application/octet-stream. */
export const SERVE_CONTENT_TYPES: Readonly<Record<string, string>> = { '.json': 'application/json' };
export const SERVE_DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** Methods the depot answers; anything else gets 405 with this list in Allow. */
export const SERVE_METHODS = ['GET', 'HEAD'] as const;
/** TLS: 1.2 minimum, 1.3 on, AEAD suites only (TLS 1.3 names first, then the TLS 1.2 ECDHE GCM/ChaCha suites). */
export const SERVE_TLS_MIN_VERSION = 'TLSv1.2';
export const SERVE_TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_AES_128_GCM_SHA256',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');
/**
 * The patch store on the depot that upgrades from 5.x read without credentials (the vendor's update tool
 * cannot do Basic auth, and its documentation supports HTTPS "without any authentication"): `serve --open` it.
 */
export const UMDS_PATCH_STORE_DIR = 'umds-patch-store';
/**
 * The ESXi software depot that vSphere Lifecycle Manager patches hosts from: a chain of a root index
 * (`<vendorList><vendor>`), a vendor index per vendor (`<metaList><metadata>`), metadata zips and the VIB files
 * they list. Element names and file names as VMware's depot format and the vendor's published depots have them.
 */
export const ESX_DEPOT = {
  /** Root index names: an offline bundle's and a hand-made depot's, and the vendor's online depots'. */
  rootIndexNames: ['index.xml', 'vmw-depot-index.xml'],
  /** The metadata zip's main document, and its folder of per-VIB documents. */
  metadataDocument: 'vmware.xml',
  metadataVibsDir: 'vibs/',
  /** The content type a root index declares for ESX content. */
  esxContentType: 'http://www.vmware.com/depotmanagement/esx',
  esxContentName: 'VMware ESX',
  /** Product ids of ESXi metadata (ESXi, and ESXi on DPUs from 8.0). */
  productIds: ['embeddedEsx', 'esxio'],
  /** The only checksum type VIB files are checked by. */
  checksumType: 'sha-256',
  /** Where VIBs sit below the folder of the metadata zip that lists them. */
  vibDir: 'vib20',
  /** UMDS's own index of its patch store, whose schema is not published: seen, never parsed. */
  umdsConsolidatedIndex: 'hostupdate/__hostupdate20-consolidated-index__.xml',
} as const;
/**
 * `depotkit serve`'s own paths at the web root, beside the depot (which lives under PROD/ and
 * umds-patch-store/, so they shadow none of its files): the status page (HTML, or JSON for
 * `Accept: application/json`), the liveness probe, Prometheus metrics and the CA certificate.
 */
export const SERVE_PAGES = { status: '/', health: '/healthz', metrics: '/metrics', caCert: '/ca.pem' } as const;
/** The liveness probe's bodies: while serving (200) and while stopping (503). */
export const SERVE_HEALTH_BODIES = { ok: '{"status":"ok"}\n', stopping: '{"status":"stopping"}\n' } as const;
/** Content type of /ca.pem (as the PEM media type is commonly served). */
export const SERVE_PEM_CONTENT_TYPE = 'application/x-pem-file';
/** Prometheus text exposition format 0.0.4, what prom-client writes and Prometheus scrapes. */
export const SERVE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** Names of the metrics /metrics exposes, summed over every serving process; monitors and dashboards key on them. */
export const SERVE_METRIC_NAMES = {
  requests: 'depotkit_http_requests_total',
  fileBytes: 'depotkit_file_bytes_sent_total',
  downloadsInFlight: 'depotkit_downloads_in_flight',
  authFailures: 'depotkit_auth_failures_total',
  tlsHandshakeFailures: 'depotkit_tls_handshake_failures_total',
  processes: 'depotkit_serving_processes',
  residentMemory: 'depotkit_resident_memory_bytes',
  slowFileReads: 'depotkit_slow_file_reads_total',
  /** Named as ssl_exporter's ssl_cert_not_after and x509-certificate-exporter's x509_cert_not_after. */
  certificateNotAfter: 'depotkit_cert_not_after',
  releaseBinaries: 'depotkit_release_binaries',
  releaseState: 'depotkit_release_state',
  esxVibs: 'depotkit_esx_vibs',
} as const;

// ------------------------------------------------------------ check: paths read without credentials

/**
 * Depot paths that clients read without credentials, which `depotkit check` asks for without them:
 * the vSAN HCL (the vendor's web-server recipe leaves its folder open) and the patch store that
 * upgrades from 5.x read (a folder: servers answer it without listing it).
 */
export const CHECK_ANONYMOUS_PATHS = { hcl: DEPOT_PATHS.hclAll, patchStore: `${UMDS_PATCH_STORE_DIR}/` } as const;

// ------------------------------------- installer: simulator and client

/** Answers of the installer API the client accepts for a new token pair (201 per the spec, 200 in the vendor's examples). */
export const INSTALLER_TOKEN_CREATED_STATUSES = [200, 201] as const;

/**
 * The `errorCode` of a 401 for a missing, expired or invalid access token. The vendor's Python
 * SDK samples (installer and SDDC Manager) refresh their token and retry only when a failed
 * call's `errorCode` is `Unauthorized` or `Unauthenticated`; which of the two the real systems
 * send is not published: `Unauthenticated` is the vAPI word for a failed authentication (401).
 */
export const INSTALLER_TOKEN_REFUSED_ERROR_CODE = 'Unauthenticated';

/** The `errorType` the installer puts in its error bodies. */
export const INSTALLER_ERROR_TYPE = 'ERROR';

/**
 * What the installer's Java TLS stack says when the depot's certificate cannot be
 * verified or does not name the host, and how its log reports the fatal alert.
 */
export const INSTALLER_TLS_MESSAGES = {
  untrusted: 'PKIX path building failed: unable to find valid certification path to requested target',
  expired: 'PKIX path validation failed: validity check failed',
  noSan: 'No subject alternative names present',
  dnsMismatch: (host: string) => `No subject alternative DNS name matching ${host} found.`,
  ipMismatch: (ip: string) => `No subject alternative names matching IP address ${ip} found`,
  fatalAlert: (host: string, port: number, alert: string, detail: string) =>
    `TLS fatal alert ${alert} against depot ${host}:${port}: javax.net.ssl.SSLHandshakeException: ${detail}`,
} as const;

/** First release whose depot settings take `url` (http or https) instead of hostname and port. */
export const INSTALLER_URL_FIELD_SINCE = '9.1';
/** First release whose depot settings take `trustedCertificates` (PEM list) trusted for that depot (the 9.1.1 API). */
export const INSTALLER_TRUSTED_CERTS_FIELD_SINCE = '9.1.1';
/** First release that refuses a depot `url` with credentials in it (userinfo). */
export const INSTALLER_URL_USERINFO_REFUSED_SINCE = '9.1.1';
/** The depot settings' 9.1 `url` must match this. */
export const INSTALLER_DEPOT_URL_PATTERN = /^https?:\/\/[^\s/]+(\/[^\s]*)?$/;

// ------------------------------------------------------------ export: configurations for other servers

/** The servers `depotkit export` writes a configuration for. */
export const EXPORT_TARGETS = ['nginx', 'apache', 'caddy', 'systemd'] as const;
export type ExportTarget = (typeof EXPORT_TARGETS)[number];
/** Port of an exported configuration without --port: HTTPS's own, which the installer shows by default. */
export const EXPORT_DEFAULT_PORT = 443;

/**
 * The TLS 1.2 suites of SERVE_TLS_CIPHERS under their IANA names, as Go's crypto/tls (Caddy) takes them.
 * TLS 1.3 suites keep one name everywhere (Go does not let them be chosen: all three are AEAD).
 */
export const TLS12_SUITE_IANA_NAMES: Readonly<Record<string, string>> = {
  'ECDHE-ECDSA-AES256-GCM-SHA384': 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384': 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256': 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256': 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-CHACHA20-POLY1305': 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  'ECDHE-RSA-CHACHA20-POLY1305': 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
};

/** Where Debian's packages of each server keep their configuration, the group their workers run as, and their commands. */
export const EXPORT_DEBIAN = {
  nginx: { group: 'www-data', siteDir: '/etc/nginx/conf.d', test: 'nginx -t', reload: 'systemctl reload nginx' },
  apache: {
    group: 'www-data',
    siteDir: '/etc/apache2/sites-available',
    portsFile: '/etc/apache2/ports.conf',
    /** Modules the exported virtual host uses; Debian enables all but ssl and allowmethods by default. */
    modules: ['ssl', 'auth_basic', 'authn_core', 'authn_file', 'authz_core', 'authz_user', 'alias', 'mime', 'env', 'allowmethods'],
    test: 'apache2ctl configtest',
    reload: 'systemctl reload apache2',
  },
  caddy: {
    group: 'caddy',
    caddyfile: '/etc/caddy/Caddyfile',
    /** Caddy's own check of the configuration, as nginx -t. */
    validate: 'caddy validate --config /etc/caddy/Caddyfile --adapter caddyfile',
    reload: 'systemctl reload caddy',
    /**
     * Caddy listens on a new SO_REUSEPORT socket at each reload and closes the old one; Linux resets the
     * connections still queued on a closed one unless this is 1 (Linux 5.14 on): then it hands them to the new one.
     */
    migrateSysctl: 'net.ipv4.tcp_migrate_req',
    sysctlFile: '/etc/sysctl.d/60-depotkit-caddy.conf',
  },
  systemd: {
    unitDir: '/etc/systemd/system',
    logrotateDir: '/etc/logrotate.d',
    sysusersDir: '/etc/sysusers.d',
    logDir: '/var/log',
    binary: '/usr/local/bin/depotkit',
    /** Followed by the unit's name: starts it now and at every boot. */
    enableNow: 'systemctl enable --now',
  },
} as const;

/** The name `depotkit export` gives a site (its files, its systemd unit) unless told another. */
export const EXPORT_DEFAULT_NAME = 'depotkit';
/** Followed by a systemd unit's name: the unit's ExecReload, SIGHUP for an exported depotkit serve. */
export const SYSTEMCTL_RELOAD = 'systemctl reload';

/** The first Caddy release that names its Basic auth directive basic_auth; before it, basicauth (kept after as a deprecated alias). */
export const CADDY_BASIC_AUTH_SINCE = '2.8.0';

// ------------------------------------------------------------ transfer: pack, unpack, mirror, prune

/**
 * A pack: the depot cut into volumes for media with size limits (see docs/transfer.md). Each volume is a
 * POSIX ustar archive; a file that does not fit whole is stored as numbered part files joined with `cat`.
 */
export const PACK_FORMAT = { name: 'depotkit-pack', version: 1 } as const;
/** The pack's manifest: what goes where, sizes, and the SHA-256 of every file and every volume. */
export const PACK_MANIFEST_FILE = 'depot-pack.json';
/** `sha256sum -c SHA256SUMS` checks the volumes, the manifest and the other files of a pack on any machine. */
export const PACK_SUMS_FILE = 'SHA256SUMS';
/** The pack manifest's signature by an operator's key (`depot pack --signing-key`): the catalog signature's format over the manifest's bytes. */
export const PACK_MANIFEST_SIG_FILE = 'depot-pack.json.sig';
/** `sha256sum -c` format for every file of the depot carried, relative to the depot root, for a hand extraction. */
export const PACK_FILE_SUMS_FILE = 'depot-files.sha256';
/** How to check and extract a pack with standard tools alone. */
export const PACK_README_FILE = 'README.txt';
/** Volume names: `depot-007-of-017.tar` (numbers zero-padded to at least three digits, so they sort). */
export const PACK_VOLUME_PREFIX = 'depot-';
export const PACK_VOLUME_SUFFIX = '.tar';
/** A file split across volumes is stored as `<path>.part-0001`, `<path>.part-0002`...: `cat <path>.part-* > <path>`. */
export const PACK_PART_SUFFIX = '.part-';
export const PACK_PART_DIGITS = 4;
/**
 * Named volume sizes. FAT32 holds files of at most 4 GiB - 1 byte, so `4G` is one byte too large for it;
 * volumes are whole 512-byte tar blocks, hence 4 GiB - 512.
 */
export const PACK_VOLUME_PRESETS: Readonly<Record<string, number>> = { fat32: 4 * 1024 ** 3 - 512 };
export const PACK_DEFAULT_VOLUME_PRESET = 'fat32';
/** The smallest volume: a few tar blocks of headers and data. */
export const PACK_MIN_VOLUME_SIZE = 64 * 1024;

/**
 * Files the vendor's metadata archive puts directly in a component folder that the catalog does not name and
 * that are not stray binaries (9.0 ships the NSX `.vlcp` there): carried by pack and mirror, never pruned.
 */
export const COMPONENT_METADATA_SUFFIXES = ['.vlcp'] as const;

/** The last segment of a web-root-relative path. */
function fileNameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Metadata a mirror fetches before the binaries: what the installer reads, then the copies the vendor's archive
 * also carries under PROD/metadata/ (absent on many servers). A server does not list folders, so the vCenter
 * upgrade metadata under PROD/COMP/VCENTER/vmw/<uuid>/ cannot be found by a mirror.
 */
export const MIRROR_METADATA_PATHS = {
  required: [DEPOT_PATHS.catalog, DEPOT_PATHS.catalogSig, DEPOT_PATHS.manifest, DEPOT_PATHS.compatibility, DEPOT_PATHS.hclAll, DEPOT_PATHS.hclLastUpdated],
  optional: [
    ...DEPOT_PATHS.metadataCompatibilityDirs.map((d) => `${d}/${fileNameOf(DEPOT_PATHS.compatibility)}`),
    `${DEPOT_PATHS.metadataHclDir}/${fileNameOf(DEPOT_PATHS.hclAll)}`,
    `${DEPOT_PATHS.metadataHclDir}/${fileNameOf(DEPOT_PATHS.hclLastUpdated)}`,
  ],
} as const;
/** Where a mirror remembers the URL it replicates (inside the depot's state folder, next to verified.json). */
export const MIRROR_STATE_FILE = 'mirror.json';
/** The folder beside PROD/ where the tools keep a depot's state (verified.json, the lock, the selection). */
export const DEPOT_STATE_DIR = '.depotkit';
/** Where a depot made with a selection (a selective mirror or unpack) records what was chosen (beside verified.json). */
export const DEPOT_SELECTION_FILE = 'selection.json';
/** A download interrupted mid-file is kept as `<TEMP_PREFIX>partial-<first 16 hex of its SHA-256>-<name>` and resumed with a Range request. */
export const MIRROR_PARTIAL_TAG = 'partial-';
/**
 * Linux's procfs (man 5 proc): the boot's random id, new at every boot; a process's stat line, whose 22nd field
 * (counting the pid as the first) is its start time in clock ticks since boot; its arguments, each ended by a NUL.
 */
export const PROC_FILES = {
  bootId: '/proc/sys/kernel/random/boot_id',
  stat: (pid: number) => `/proc/${pid}/stat`,
  cmdline: (pid: number) => `/proc/${pid}/cmdline`,
  statStartTimeField: 22,
} as const;

/**
 * The environment variables that name an HTTP(S) proxy, each pair in the order curl reads it (the lower-case name
 * first): one pair for https:// URLs, one for http:// URLs, and the list of hosts reached without a proxy.
 */
export const PROXY_ENV = {
  https: ['https_proxy', 'HTTPS_PROXY'],
  http: ['http_proxy', 'HTTP_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const;
/**
 * A proxy's answers to a CONNECT it wants credentials for: 407 Proxy Authentication Required (RFC 9110), and the 401
 * tinyproxy sends for wrong ones; the header that names the schemes it takes, and Basic's name there.
 */
export const PROXY_AUTH_REQUIRED = { statuses: [407, 401] as readonly number[], challengeHeader: 'proxy-authenticate', basicScheme: 'basic' } as const;
/**
 * Node's environment variable of extra command-line options (the single executable reads it too), and V8's option
 * for the largest semi-space of the young generation in MiB, which Node takes there (nodejs.org/api/cli.html).
 */
export const NODE_OPTIONS_ENV = 'NODE_OPTIONS';
export const NODE_SEMI_SPACE_FLAG = '--max-semi-space-size';
