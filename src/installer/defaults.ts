/** What the installer commands and clients do unless told otherwise; the CLI shows these as its defaults. */
export const INSTALLER_DEFAULTS = {
  /** Timeout of each API request. */
  timeoutMs: 30_000,
  /**
   * Consumers of a fleet worked on at once. Each spends most of its time waiting on the consumer (its depot
   * validation, the sync polled from a tenth of a second up to every second), little on this side: a few kilobytes and one connection.
   */
  concurrency: 32,
  /** How long pushDepot waits for the depot settings to show a status. */
  depotWaitMs: 60_000,
  /** How long ensureSynced waits for the depot's metadata sync. */
  syncTimeoutMs: 600_000,
  /** How long downloadRelease waits for every bundle. */
  downloadTimeoutMs: 6 * 3600_000,
  /** The depot's port when the settings give a host name only (the installer's own default). */
  depotPort: 443,
  /** Days before the depot's CA expires from which installer status flags a consumer that trusts it. */
  depotCaWarnDays: 30,
} as const;
