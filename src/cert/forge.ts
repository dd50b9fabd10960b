import { createRequire } from 'node:module';
import type Forge from 'node-forge';

let loaded: typeof Forge | undefined;

/**
 * node-forge, loaded on first use: it costs about 70 ms of CPU at every start, and the
 * commands a script runs in a loop (inspect, check, installer status) never build a certificate.
 */
export const forge: typeof Forge = new Proxy({} as typeof Forge, {
  get: (_target, key) => (loaded ??= createRequire(import.meta.url)('node-forge') as typeof Forge)[key as keyof typeof Forge],
});
