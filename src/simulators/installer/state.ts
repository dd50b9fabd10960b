import type { DepotStatus } from '../../constants.js';
import { usageError } from '../../util/errors.js';
import { readTextIfExists, writeJsonAtomic } from '../../util/fs.js';
import type { RefreshRecord } from './tokens.js';
import type { StoredCertificate } from './trust-store.js';

/** The depot settings as the installer keeps them; the password is used once, to validate, and never kept. */
export interface StoredDepot {
  username?: string;
  hostname: string;
  port: number;
  url?: string;
  /** Certificates an earlier simulator trusted for this depot only; they now go into the trust store. */
  trustedCertificates?: string[];
  status: DepotStatus;
  message: string;
}

/** What survives a restart with `--state FILE`. */
export interface SimState {
  /** HS256 secret, hex: tokens issued before a restart stay valid. */
  secret: string;
  trustedCertificates: StoredCertificate[];
  depot?: StoredDepot;
  refreshTokens: Record<string, RefreshRecord>;
}

const STATE_VERSION = 1;

export async function loadState(path: string): Promise<SimState | undefined> {
  const text = await readTextIfExists(path);
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw usageError(`The state file ${path} is not JSON.`, 'Remove it to start with an empty installer.');
  }
  const state = data as Partial<SimState> & { version?: number };
  if (
    state.version !== STATE_VERSION ||
    typeof state.secret !== 'string' ||
    !Array.isArray(state.trustedCertificates) ||
    typeof state.refreshTokens !== 'object'
  ) {
    throw usageError(`The state file ${path} is not an installer simulator state (version ${STATE_VERSION}).`, 'Remove it to start with an empty installer.');
  }
  return { secret: state.secret, trustedCertificates: state.trustedCertificates, depot: state.depot, refreshTokens: state.refreshTokens ?? {} };
}

/**
 * Writes the state after every change, one write at a time, each atomic
 * (temporary file, flush, rename): a crash leaves the previous state whole.
 * Mode 0600: the file holds the token secret.
 */
export class StateWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly path: string | undefined) {}

  save(snapshot: () => SimState): Promise<void> {
    const path = this.path;
    if (!path) return Promise.resolve();
    const next = this.chain.then(() => writeJsonAtomic(path, { version: STATE_VERSION, ...snapshot() }, { force: true, mode: 0o600 }));
    // A failed write is reported to its caller; later writes still run.
    this.chain = next.catch(() => undefined);
    return next;
  }

  flush(): Promise<void> {
    return this.chain;
  }
}
