import type { MgmtApiGeneration } from '../constants.js';

/** `--api`: a generation, or `auto` for the newer one when the server has it. Kept light for the CLI. */
export type ApiChoice = 'auto' | MgmtApiGeneration;
export const API_CHOICES: readonly ApiChoice[] = ['auto', 'rest', 'api'];
