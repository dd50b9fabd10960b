import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { ServerSignals, supervise, type SupervisionHooks } from '../../src/server/supervise.js';
import { startDepot } from '../../src/server/workers.js';
import { tempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { writeTree } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-supervise-'));
});
afterAll(() => cleanup?.());

// The library supervises a server on its signals, saying what it does through the caller's hooks: the CLI
// prints them, a program may log them. Signals are emitted on this process's listeners, not sent to it.
it('reloads on SIGHUP, stops gracefully on SIGTERM, and a second stop ends at once; a signal held while starting is acted on', async () => {
  const root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
  const termListeners = process.listenerCount('SIGTERM');
  const signals = new ServerSignals();
  // A reload asked before the server is supervised waits for it.
  process.emit('SIGHUP', 'SIGHUP');
  const running = await startDepot({ root, host: '127.0.0.1', port: 0 }, 1, 2000);
  const said: string[] = [];
  let stoppedNow = 0;
  const hooks: SupervisionHooks = { note: (l) => said.push(l), warn: (l) => said.push(`warn: ${l}`), stopNow: () => void stoppedNow++ };
  const stopped = supervise(running, undefined, 2000, hooks, signals);
  await until(() => said.includes('Reloaded the certificate, key and users.'), 'the held reload');
  process.emit('SIGHUP', 'SIGHUP');
  await until(() => said.filter((l) => l === 'Reloaded the certificate, key and users.').length === 2, 'the second reload');
  process.emit('SIGTERM', 'SIGTERM');
  process.emit('SIGINT', 'SIGINT');
  await stopped;
  expect(said).toContain('Stopping: no new connections; running downloads have 2 s to finish.');
  expect(said[said.length - 1]).toBe('Stopped.');
  expect(stoppedNow).toBe(1);
  expect(said.filter((l) => l.startsWith('warn:'))).toEqual([]);
  signals.close();
  expect(process.listenerCount('SIGTERM')).toBe(termListeners);
});
