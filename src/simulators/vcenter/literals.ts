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

/** How long the simulated server stops listening after a replacement, as the real one restarts its services. */
export const MGMT_SIM_RESTART_MS = 2000;

/** Attributes of the session cookie set at session creation. */
export const MGMT_SESSION_COOKIE_ATTRIBUTES = 'Path=/; HttpOnly; Secure';
