/** How long `vcenter depot` waits for vLCM's sync task by default (apart, so that the CLI's option table reads it without the client). */
export const VCENTER_DEPOT_DEFAULTS = { syncTimeoutMs: 10 * 60_000 } as const;
