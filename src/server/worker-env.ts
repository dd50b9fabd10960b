import { NODE_OPTIONS_ENV, NODE_SEMI_SPACE_FLAG } from '../constants.js';
import { SERVE_WORKER_SEMI_SPACE_MB } from './tuning.js';

/**
 * The environment a forked serving process starts with: this process's, with a small young generation added to
 * Node's options unless this process was given a size of its own (on its command line or in that variable). The
 * environment, not the fork's execArgv: the single executable takes arguments as its own, never as Node's.
 */
export function workerEnv(env: NodeJS.ProcessEnv = process.env, execArgv: string[] = process.execArgv): NodeJS.ProcessEnv {
  const given = env[NODE_OPTIONS_ENV] ?? '';
  if (given.includes(NODE_SEMI_SPACE_FLAG) || execArgv.some((a) => a.startsWith(NODE_SEMI_SPACE_FLAG))) return env;
  return { ...env, [NODE_OPTIONS_ENV]: `${given} ${NODE_SEMI_SPACE_FLAG}=${SERVE_WORKER_SEMI_SPACE_MB}`.trim() };
}
