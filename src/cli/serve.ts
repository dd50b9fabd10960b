import { withOptions } from './option-table.js';
import { basename, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEPOT_ROOT_DIR } from '../constants.js';
// Libraries load when the command runs (the CLI starts fast; the serving process stays small).
import type { DepotServerOptions } from '../server/index.js';
import type { TlsMaterial } from '../server/tls.js';
import type { RunningDepot } from '../server/workers.js';
import { usageError } from '../util/errors.js';
import { exists, isDirectory } from '../util/fs.js';
import { type ServeOptionValues, assertTogether, basicAuthFrom, warnIfExposed } from './options.js';
import { note, printJson, printLines, warn } from './output.js';
import { invokedAs, serverSignals, whenNpmParentDies } from './process.js';
import type { SupervisionHooks } from '../server/supervise.js';

interface ServeOptions extends ServeOptionValues {
  host: string;
  workers: number;
  http?: boolean;
  metricsOpen?: boolean;
  sendTimeout: number;
}

/** Where the certificate comes from; called again on SIGHUP, so a rotated file or CA is picked up. */
function tlsLoader(opts: ServeOptions): (() => Promise<TlsMaterial>) | undefined {
  assertTogether(opts as unknown as Record<string, unknown>, ['--cert', '--key']);
  if (opts.cert && opts.key) {
    const source = { certFile: opts.cert, keyFile: opts.key };
    return async () => {
      const material = await (await import('../server/tls.js')).loadTlsMaterial(source);
      // Said at start and on every reload: a server that starts on an expired certificate serves nobody.
      const dates = (await import('../server/served-certificate.js')).servedCertificateProblem(material.certPem);
      if (dates) warn(dates.fix ? `${dates.message} ${dates.fix}` : dates.message);
      await warnIfExposed(source.keyFile);
      // A CA certificate served as the depot's: strict clients refuse it for a server, and its key signs certificates.
      if ((await import('../cert/certificate.js')).readCertificate(material.certPem).isCa)
        warn(
          `${source.certFile} is a CA certificate (CA:TRUE), not a server certificate: issue one from that CA with ${invokedAs()} cert issue --ca <ca-dir> --dns <depot FQDN> --out <out-dir>.`,
        );
      return material;
    };
  }
  if (opts.ca) {
    const caDir = opts.ca;
    const { dns, ip } = opts;
    return async () => {
      const { certificateFromCa, machineNames } = await import('../cert/machine.js');
      const machine = machineNames();
      // Each list falls back to the machine's on its own: --dns alone still lets clients reach the server by its addresses.
      return certificateFromCa(caDir, { dns: dns.length > 0 ? dns : machine.dns, ips: ip.length > 0 ? ip : machine.ips });
    };
  }
  if (opts.dns.length > 0 || opts.ip.length > 0) throw usageError('--dns and --ip name the certificate issued with --ca; give --ca <dir> too.');
  return undefined;
}

async function checkRoot(dir: string): Promise<void> {
  // As depot verify says it: a path that is not there is not "not a folder".
  if (!(await exists(dir))) throw usageError(`${dir} does not exist.`, `Give the depot root: the folder that contains ${DEPOT_ROOT_DIR}/.`);
  if (!(await isDirectory(dir))) throw usageError(`${dir} is not a folder.`);
  if (await isDirectory(resolve(dir, DEPOT_ROOT_DIR))) return;
  if (basename(dir) === DEPOT_ROOT_DIR) {
    throw usageError(
      `${dir} is the ${DEPOT_ROOT_DIR} folder itself; the installer fetches /${DEPOT_ROOT_DIR}/..., so serve the folder that contains it.`,
      `depotkit serve ${resolve(dir, '..')}`,
    );
  }
  warn(`${dir} has no ${DEPOT_ROOT_DIR}/ folder; the installer will find nothing there.`);
}

export function registerServeCommands(program: Command): void {
  withOptions(
    program
      .command('serve')
      .description('serve a depot (the folder with PROD/) over HTTPS with Basic auth')
      .argument('<dir>', 'the web root: the folder that contains PROD/'),
  ).action(serve);
}

async function serve(dir: string, opts: ServeOptions): Promise<void> {
  const signals = serverSignals();
  // Until the server listens a stop ends the command at once (nothing is open yet, a password prompt may be waiting);
  // a reload waits for the server.
  signals.handTo((signal) => signal !== 'SIGHUP' && stopBeforeServing());
  const { options, loadTls } = await serverOptions(resolve(dir), opts);
  const graceMs = opts.grace * 1000;
  // While the processes start, every signal waits: a stop then ends the server cleanly, a reload reloads it;
  // a second stop ends it at once, as a second Ctrl-C does once it serves.
  let stops = 0;
  signals.handTo((signal) => {
    if (signal !== 'SIGHUP' && ++stops > 1) stopNow();
    return false;
  });
  const running = await runDepot(options, opts.workers, graceMs);
  // Signals are handled before the address is printed: whoever reads it may stop the server at once.
  const { supervise } = await import('../server/supervise.js');
  const stopped = supervise(running, loadTls, graceMs, CLI_SUPERVISION, signals, opts.accessLog === '-' ? undefined : opts.accessLog);
  printServing(running, options, opts.json);
  note('SIGHUP reloads the certificate, key and htpasswd file (and reopens the access log); SIGTERM or Ctrl-C stops after running downloads finish.');
  await stopped;
}

/** The server's options from the command line, the certificate and users read and checked before anything is said or started. */
async function serverOptions(root: string, opts: ServeOptions): Promise<{ options: DepotServerOptions; loadTls: (() => Promise<TlsMaterial>) | undefined }> {
  if (opts.accessLog === undefined && opts.logFormat === 'json') throw usageError('--log-format needs --access-log.');
  await checkRoot(root);
  // Checked by the library, which names the option in its error.
  const { openPrefixesOf } = await import('../server/index.js');
  const openPrefixes = openPrefixesOf({ openPrefixes: opts.open, openHcl: opts.openHcl });
  const loadTls = tlsLoader(opts);
  if (!loadTls && !opts.http) throw usageError('No certificate given.', 'Give --cert and --key, or --ca <dir> to issue one, or --http for plain HTTP.');
  // An unusable pair ends here with one sentence.
  const tls = loadTls ? await loadTls() : undefined;
  const auth = await basicAuthFrom(opts);
  if (!auth) warn('serving without authentication: anyone who can reach this port can download the depot.');
  if (openPrefixes.length > 0 && !auth) warn('--open and --open-hcl do nothing without auth: the whole depot is open.');
  for (const prefix of openPrefixes) {
    if (!(await exists(resolve(root, prefix)))) warn(`${prefix} does not exist under ${root} (yet); it is open once it does.`);
  }
  const options: DepotServerOptions = {
    root,
    host: opts.host,
    port: opts.port,
    tls,
    ...(opts.key ? { keyFile: opts.key } : {}),
    auth,
    openPrefixes,
    accessLog: opts.accessLog === undefined ? undefined : { destination: opts.accessLog, format: opts.logFormat },
    sendTimeoutMs: opts.sendTimeout * 1000,
    metricsOpen: opts.metricsOpen,
  };
  return { options, loadTls };
}

function printServing(running: RunningDepot, options: DepotServerOptions, json: boolean | undefined): void {
  const { root, tls, auth, openPrefixes = [] } = options;
  if (json) {
    printJson({
      url: running.url,
      port: running.port,
      root,
      workers: running.workers,
      tls: Boolean(tls),
      auth: auth ? ('htpasswdFile' in auth ? 'htpasswd' : 'user') : 'none',
      open: openPrefixes,
      pid: process.pid,
    });
    return;
  }
  printLines([`Serving ${root} at ${running.url} in ${running.workers} process${running.workers === 1 ? '' : 'es'} (pid ${process.pid}).`]);
  if (auth && openPrefixes.length > 0) printLines([`Open without credentials: ${openPrefixes.map((p) => `/${p}/`).join(', ')}.`]);
}

/** One server in this process, which with `workers` > 1 also hands its socket to `workers - 1` forked ones. */
export async function runDepot(options: DepotServerOptions, workers: number, graceMs: number): Promise<RunningDepot> {
  return (await import('../server/workers.js')).startDepot(options, workers, graceMs);
}

function stopNow(): never {
  note('Stopping now.');
  process.exit(1);
}

function stopBeforeServing(): never {
  note('Stopped before serving.');
  process.exit(0);
}

/** How the CLI's server is supervised: its lines on stderr, a second stop ends the process, npm's parent watched. */
export const CLI_SUPERVISION: SupervisionHooks = { note, warn, stopNow, watchParent: (stop) => whenNpmParentDies(stop) };
