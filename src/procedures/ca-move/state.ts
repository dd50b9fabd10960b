import { DepotkitError, EXIT } from '../../util/errors.js';
import { readTextIfExists, writeJsonAtomic } from '../../util/fs.js';

/** What a move has done so far, kept beside the depot so that a re-run carries on. */
export interface CaMoveState {
  version: 1;
  /** The move this state belongs to: another new certificate starts afresh. */
  newCaSha256: string;
  leafSha256: string;
  /** Every consumer holds the new CA (proven by its list). */
  trusted?: string;
  /** The server serves the new certificate. */
  switched?: string;
  /** Consumers (by name) that validated the depot on the new certificate. */
  revalidated: string[];
  /** Consumers (by name) the old CA was removed from. */
  retired: string[];
}

export function freshState(newCaSha256: string, leafSha256: string): CaMoveState {
  return { version: 1, newCaSha256, leafSha256, revalidated: [], retired: [] };
}

/** The state of this move, or undefined when there is none (or it belongs to another move). */
export async function loadState(path: string, newCaSha256: string, leafSha256: string): Promise<CaMoveState | undefined> {
  const text = await readTextIfExists(path);
  if (text === undefined) return undefined;
  let state: CaMoveState;
  try {
    state = JSON.parse(text) as CaMoveState;
  } catch {
    throw new DepotkitError(`The move's state file ${path} is not JSON.`, EXIT.usage, 'Remove it to start the move afresh.');
  }
  if (state?.version !== 1 || !Array.isArray(state.revalidated) || !Array.isArray(state.retired)) {
    throw new DepotkitError(`The move's state file ${path} is not one depotkit wrote.`, EXIT.usage, 'Remove it to start the move afresh.');
  }
  return state.newCaSha256 === newCaSha256 && state.leafSha256 === leafSha256 ? state : undefined;
}

export async function saveState(path: string, state: CaMoveState): Promise<void> {
  await writeJsonAtomic(path, state, { force: true });
}
