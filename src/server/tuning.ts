import { availableParallelism } from 'node:os';

/**
 * Tuning values of `depotkit serve`: our choices, not literals of any real
 * system's interface (those stay in src/constants.ts). The CLI shows them as
 * its defaults; tests and benchmarks pass other values through the options.
 */

/** Port `depotkit serve` listens on without --port (443 needs privileges; the installer takes any port). */
export const SERVE_DEFAULT_PORT = 8443;
/**
 * Serving processes without --workers: one per core beyond the first, at least one. One process with its reads in
 * the event loop moves about 1.2 GiB/s on one core (0.8 CPU s/GiB: scripts/bench/serve.sh), a 10 Gbit/s link's worth,
 * and the kernel's network and disk work needs a core too; each further process costs about 45 MiB resident. On 2
 * cores one process served one and four downloads as fast as two, within the noise, at half the memory.
 */
export function defaultServingProcesses(cores: number = availableParallelism()): number {
  return Math.max(1, cores - 1);
}
/** Size of each of the two reused read buffers of a download (measured: scripts/bench/serve.sh, docs/benchmarks.md). */
export const SERVE_READ_BUFFER = 256 * 1024;
/**
 * A file read in the event loop that takes this long or longer while the process sleeps is a slow one (the disk: a
 * 256 KiB read from the page cache takes tens of microseconds); a second within SERVE_SLOW_READ_SPAN reads in the
 * loop sends the serving process's reads to libuv's pool for SERVE_POOL_READ_MS, then the loop tries again
 * (file-reads.ts; measured: scripts/bench/serve.sh, docs/benchmarks.md).
 */
export const SERVE_LOOP_READ_BOUND_MS = 2;
export const SERVE_SLOW_READ_SPAN = 16;
export const SERVE_POOL_READ_MS = 1_000;
/** Seconds running downloads get to finish after SIGTERM/SIGINT before they are cut. */
export const SERVE_DEFAULT_GRACE_SECONDS = 30;
/** Seconds a download may make no progress (a client that stopped reading) before it is cut: nginx's send_timeout default. */
export const SERVE_DEFAULT_SEND_TIMEOUT_SECONDS = 60;
/**
 * Replacing serve's workers that die young: the second in a row waits SERVE_RESPAWN_FIRST_DELAY_MS, each
 * next one twice as long, at most SERVE_RESPAWN_MAX_DELAY_MS; a worker that served SERVE_WORKER_STABLE_MS
 * before it died starts the count again.
 */
export const SERVE_RESPAWN_FIRST_DELAY_MS = 1_000;
export const SERVE_RESPAWN_MAX_DELAY_MS = 30_000;
export const SERVE_WORKER_STABLE_MS = 30_000;
/**
 * Times a worker is forked while the server starts, when it ends before it serves without saying why (a
 * signal to the process group as it booted: SIGHUP kills a Node process until it listens for it).
 */
export const SERVE_WORKER_START_ATTEMPTS = 3;
/**
 * How long a successful htpasswd check is remembered, so a download's many requests do not each pay bcrypt, and
 * how many are remembered at most per serving process (the least recently used forgotten first).
 */
export const SERVE_AUTH_CACHE_MS = 60_000;
export const SERVE_AUTH_CACHE_ENTRIES = 1024;
/**
 * Wrong passwords a client address may send in a row to one serving process before it gets 429 with
 * Retry-After; one more is allowed every SERVE_AUTH_FAILURE_REFILL_MS (ten a minute). Addresses
 * remembered at most (least recently seen forgotten first).
 */
export const SERVE_AUTH_FAILURE_BURST = 10;
export const SERVE_AUTH_FAILURE_REFILL_MS = 6_000;
export const SERVE_AUTH_TRACKED_CLIENTS = 10_000;
/**
 * The queue of bcrypt checks serves first the address and user name that asked for fewest lately: each count
 * halves every SERVE_AUTH_ASKED_HALF_LIFE_MS (ten refills of the failure budget).
 */
export const SERVE_AUTH_ASKED_HALF_LIFE_MS = 60_000;
/** Threads per serving process that compute bcrypt. */
export const SERVE_AUTH_HASH_THREADS = 1;
/** bcrypt checks running or waiting at once per serving process; more get 503 with Retry-After. */
export const SERVE_AUTH_MAX_PENDING = 16;
/**
 * Largest semi-space of a forked serving process's young generation, in MiB (V8's --max-semi-space-size; its
 * default lets each grow to 16 MiB under load). A download's garbage is a few objects per 256 KiB buffer, so the
 * smaller young generation costs no measurable CPU and keeps tens of MiB off the peak (scripts/bench/serve.sh).
 */
export const SERVE_WORKER_SEMI_SPACE_MB = 1;
