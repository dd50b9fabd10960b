import { SERVE_WORKER_SEMI_SPACE_MB } from './tuning.js';

const SEMI_SPACE_FLAG = '--max-semi-space-size';

/**
 * The environment a forked serving process starts with: this process's, with a small young generation added to
 * NODE_OPTIONS unless this process was given a size of its own (on its command line or in NODE_OPTIONS). The
 * environment, not the fork's execArgv: the single executable takes arguments as its own, never as Node's.
 */
export function workerEnv(env: NodeJS.ProcessEnv = process.env, execArgv: string[] = process.execArgv): NodeJS.ProcessEnv {
  const given = env.NODE_OPTIONS ?? '';
  if (given.includes(SEMI_SPACE_FLAG) || execArgv.some((a) => a.startsWith(SEMI_SPACE_FLAG))) return env;
  return { ...env, NODE_OPTIONS: `${given} ${SEMI_SPACE_FLAG}=${SERVE_WORKER_SEMI_SPACE_MB}`.trim() };
}
