// The library's new keys come from the suite's pool (test/helpers/key-pool.ts), not node:crypto, unless a test
// puts node:crypto back with useKeySource(undefined) (the next file gets the pool again).
import { useKeySource, type KeySource } from '../../src/cert/keys.js';
import { pooledKeyPem } from '../helpers/key-pool.js';

export const poolSource: KeySource = async (bits) => pooledKeyPem(bits);

useKeySource(poolSource);
