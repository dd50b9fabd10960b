/**
 * Signals that come while a server starts: `systemctl reload` right after
 * `start`, a log rotation at boot, a stop while the workers are forked. Each
 * round starts a real `depotkit serve`, signals it (and whatever workers it
 * has forked by then) the moment its port accepts a connection, and looks at
 * what became of it.
 */
import { type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { fetchRaw, writeTree } from './helpers.js';
import { ended, freePort, untilAccepting } from '../helpers/ports.js';
import { until } from '../helpers/poll.js';

/**
 * Rounds per test: each lands its signals at another point of the start. Before serve held signals while it
 * started, a SIGHUP the moment the port accepted killed every round, so four show a regression with room to spare.
 */
const ROUNDS = 4;
/** Rounds per simulator: a simulator listens for SIGTERM before its port opens, so each round finds it alike. */
const SIM_ROUNDS = 2;
/** Each test starts several servers in a row: more than the default minute on a busy machine. */
const ROUNDS_TIMEOUT_MS = 300_000;

let dir: string;
let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('depotkit-early-signals-'));
  root = await writeTree(join(dir, 'web'), { [DEPOT_PATHS.catalog]: '{"patches": {}}\n' });
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await cleanup?.();
});

/** The process and those it forked so far (Linux /proc). */
async function withChildren(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return [pid, ...text.split(/\s+/).filter(Boolean).map(Number)];
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

interface Started {
  child: ChildProcess;
  port: number;
  stderr: () => string;
  /** Resolves with the JSON line once ready (undefined if it ended first). */
  ready: Promise<Record<string, unknown> | undefined>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `depotkit <args> --port <free> --json`, without waiting for anything. */
async function start(args: string[], env?: NodeJS.ProcessEnv): Promise<Started> {
  const port = await freePort();
  const child = spawnCli([...args, '--port', String(port), '--json'], { env });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
  const ready = new Promise<Record<string, unknown> | undefined>((resolve) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch {
        // Not whole yet.
      }
    });
    void exited.then(() => resolve(undefined));
  });
  return { child, port, stderr: () => err, ready, exited };
}

/**
 * Signals the process and the workers it has forked, the moment its port accepts; and each worker once more as
 * soon as the first ones appear (the primary listens before it forks them), wherever they are in their start.
 */
async function signalAtFirstAccept(s: Started, signal: NodeJS.Signals): Promise<void> {
  // The port: every 5 ms, a small part of the workers' start (a Node process's own boot takes longer), so the
  // signal still lands while serve starts them, at a fifth of the connects of a 1 ms poll. The forks: every
  // millisecond, to reach a worker early in its boot. Bounded by the test's timeout alone.
  const bound = { timeoutMs: 60_000, everyMs: 1 };
  await untilAccepting(s.port, 'serve to accept', { ...bound, everyMs: 5, failIf: ended(s.child) });
  const pid = s.child.pid!;
  const first = await withChildren(pid);
  for (const p of first) kill(p, signal);
  let settled = false;
  void s.ready.then(() => (settled = true));
  const all = await until(
    () => withChildren(pid),
    (ps) => ps.length > 1 || settled,
    'serve to fork a worker',
    bound,
  );
  for (const p of all.slice(1)) if (!first.includes(p)) kill(p, signal);
}

/**
 * Runs rounds 0 to n-1 two at a time: each starts a process of its own on a port of its own, and much of a round
 * is waiting (for the port, the fork, the exit), so a second round in the meantime shortens the test.
 */
async function inPairs(n: number, round: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < n; i += 2) await Promise.all([round(i), ...(i + 1 < n ? [round(i + 1)] : [])]);
}

const serveArgs = () => ['serve', root, '--http', '--host', '127.0.0.1', '--workers', '2'];

describe('serve: signals while it starts', () => {
  it(
    `a SIGHUP the moment the port accepts (to the primary and its workers) is harmless: it serves afterwards (${ROUNDS} rounds)`,
    async () => {
      await inPairs(ROUNDS, async (round) => {
        const s = await start(serveArgs());
        await signalAtFirstAccept(s, 'SIGHUP');
        const info = await s.ready;
        expect(info, `round ${round}: ${s.stderr()}`).toMatchObject({ port: s.port, workers: 2 });
        // The reload held back until the server was ready is done then.
        await expect.poll(() => s.stderr(), { timeout: 60_000 }).toContain('Reloaded the certificate, key and users.');
        for (let i = 0; i < 4; i++) expect((await fetchRaw(`http://127.0.0.1:${s.port}`, `/${DEPOT_PATHS.catalog}`)).status).toBe(200);
        expect(s.child.exitCode, s.stderr()).toBeNull();
        s.child.kill('SIGTERM');
        expect(await s.exited, s.stderr()).toEqual({ code: 0, signal: null });
        expect(s.stderr()).not.toMatch(/exited while starting|could not start|\n\s+at /);
      });
    },
    ROUNDS_TIMEOUT_MS,
  );

  it(
    `a SIGTERM the moment the port accepts (to the primary and its workers) stops it cleanly: exit 0 (${ROUNDS} rounds)`,
    async () => {
      await inPairs(ROUNDS, async (round) => {
        const s = await start(serveArgs());
        await signalAtFirstAccept(s, 'SIGTERM');
        expect(await s.exited, `round ${round}: ${s.stderr()}`).toEqual({ code: 0, signal: null });
        expect(s.stderr()).toContain('Stopped.');
        expect(s.stderr()).not.toMatch(/depotkit: |\n\s+at /);
      });
    },
    ROUNDS_TIMEOUT_MS,
  );
});

describe('simulators: signals while they start', () => {
  const sims = {
    installer: { args: ['sim', 'installer', '--host', '127.0.0.1', '--quiet'], env: {} },
    mgmt: { args: ['sim', 'mgmt', '--host', '127.0.0.1', '--password-env', 'SIM_PASSWORD'], env: { SIM_PASSWORD: 'Sim-pa55word!' } },
  };
  for (const [name, sim] of Object.entries(sims)) {
    it(
      `sim ${name}: a SIGTERM the moment the port accepts stops it with exit 0`,
      async () => {
        await inPairs(SIM_ROUNDS, async (round) => {
          const s = await start(sim.args, sim.env);
          await signalAtFirstAccept(s, 'SIGTERM');
          expect(await s.exited, `round ${round}: ${s.stderr()}`).toEqual({ code: 0, signal: null });
          expect(s.stderr()).not.toMatch(/\n\s+at /);
        });
      },
      ROUNDS_TIMEOUT_MS,
    );
  }
});
