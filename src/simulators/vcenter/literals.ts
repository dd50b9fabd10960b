import { VLCM_HOSTNAME_MISMATCH_WORDS } from '../../constants.js';

/**
 * The management server simulator's own choices, where nothing public shows
 * the real server's: message ids and the session cookie's attributes.
 */

/**
 * Message ids of the simulator's errors: its choice, in the vendor's naming style (the real ids
 * are not all public). Clients key on the error type, never on these.
 */
export const MGMT_MESSAGE_IDS = {
  authenticationRequired: 'com.vmware.vapi.endpoint.method.authentication.required',
  notFound: 'com.vmware.vapi.rest.httpNotFound',
  badRequest: 'com.vmware.vapi.rest.badRequest',
  tlsInvalid: 'com.vmware.vcenter.certificate_management.tls.invalid',
  csrInvalid: 'com.vmware.vcenter.certificate_management.tls_csr.invalid',
  chainInvalid: 'com.vmware.vcenter.certificate_management.trusted_root_chains.invalid',
  chainNotFound: 'com.vmware.vcenter.certificate_management.trusted_root_chains.not_found',
  chainExists: 'com.vmware.vcenter.certificate_management.trusted_root_chains.already_exists',
  operationNotFound: 'vapi.method.input.invalid.interface',
} as const;

/** The simulated appliance's version and build by default. */
export const MGMT_SIM_VERSION = '9.0.0.0';
export const MGMT_SIM_BUILD = '24755230';

/** How long the simulated server stops listening after a replacement, as the real one restarts its services. */
export const MGMT_SIM_RESTART_MS = 2000;

/** Attributes of the session cookie set at session creation. */
export const MGMT_SESSION_COOKIE_ATTRIBUTES = 'Path=/; HttpOnly; Secure';

/** Message ids of vLCM's refusals and task errors: the simulator's choice, in the vendor's naming style. */
export const VLCM_MESSAGE_IDS = {
  depotInvalid: 'com.vmware.vcIntegrity.lifecycle.depots.invalid',
  depotNotFound: 'com.vmware.vcIntegrity.lifecycle.depots.not_found',
  depotExists: 'com.vmware.vcIntegrity.lifecycle.depots.already_exists',
  depotInaccessible: 'com.vmware.vcIntegrity.lifecycle.depots.sync.inaccessible',
  depotCause: 'com.vmware.vcIntegrity.lifecycle.depots.sync.cause',
  taskNotFound: 'com.vmware.cis.tasks.not_found',
  syncProgress: 'com.vmware.vcIntegrity.lifecycle.depots.sync.progress',
  syncDescription: 'com.vmware.vcIntegrity.lifecycle.depots.sync',
  offlineDescription: 'com.vmware.vcIntegrity.lifecycle.depots.offline.create',
} as const;

/** The services and operations a task names (the vAPI ids of the depot services). */
export const VLCM_TASK_OPERATIONS = {
  sync: { service: 'com.vmware.esx.settings.depots', operation: 'sync' },
  offline: { service: 'com.vmware.esx.settings.depots.offline', operation: 'create' },
} as const;

/**
 * What the simulated vLCM fetches with, as vLCM's Python depot client words its failures: a refused
 * certificate in the words of Python's ssl module, then OpenSSL's reason.
 */
export const VLCM_SIM_FETCH = {
  /** One request's timeout. */
  timeoutMs: 30_000,
  /** The largest offline bundle the simulator pulls (it holds it in a temporary file). */
  maxBundleBytes: 512 * 1024 ** 2,
  sslPrefix: '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: ',
  hostnameMismatch: (host: string) => `${VLCM_HOSTNAME_MISMATCH_WORDS}, certificate is not valid for '${host}'.`,
} as const;
