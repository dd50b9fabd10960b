import { withOptions } from './option-table.js';
import { basename, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEPOT_PATHS } from '../constants.js';
import type { QuickstartStep } from '../server/quickstart.js';
import { SERVE_DEFAULT_GRACE_SECONDS, SERVE_DEFAULT_PORT } from '../server/tuning.js';
import { EXIT, usageError } from '../util/errors.js';
import { exists } from '../util/fs.js';
import { PortInUseError } from '../util/listen.js';
import { formatVerifyResult } from './depot.js';
import { note, printLines } from './output.js';
import { invokedAs, serverSignals, startedByNpm } from './process.js';
import { CLI_SUPERVISION } from './serve.js';
import { supervise } from '../server/supervise.js';

export const DEMO_DEPOT_DIR = 'demo-depot';
export const DEMO_PKI_DIR = 'demo-pki';

/** How the user ran this command: `npm start`, or depotkit's own `quickstart`. */
function startCommand(): string {
  return startedByNpm() && process.env.npm_lifecycle_event === 'start' ? 'npm start' : `${invokedAs()} quickstart`;
}

/** `npm start`: the main job on an embedded default. */
export function registerStartCommand(program: Command): void {
  withOptions(
    program
      // The demo, not a production service: `start` (its first name, and npm's) stays an alias.
      .command('quickstart')
      .alias('start')
      .description(`make ./${DEMO_DEPOT_DIR} if needed, verify and serve it (CA, password in ./${DEMO_PKI_DIR})`),
  ).action(async (opts: { serve: boolean; host: string; port: number }) => {
    const { quickstart } = await import('../server/quickstart.js');
    const graceMs = SERVE_DEFAULT_GRACE_SECONDS * 1000;
    const started = await quickstart({
      depotDir: DEMO_DEPOT_DIR,
      pkiDir: DEMO_PKI_DIR,
      ...(opts.serve ? { serve: { host: opts.host, port: opts.port, graceMs } } : {}),
      onStep: showStep,
    }).catch((err: unknown) => {
      if (!(err instanceof PortInUseError)) throw err;
      const again = `${startCommand()} ${startCommand() === 'npm start' ? '-- ' : ''}--port`;
      throw usageError(err.message, `Pick another port: ${again} ${SERVE_DEFAULT_PORT + 1000}, or ${again} 0 for any free one.`);
    });
    process.exitCode = started.verify.ok ? EXIT.ok : EXIT.problems;
    if (!started.serving) {
      if (started.verify.ok) printLines(['', ...(await serveHint())]);
      return;
    }
    // Listening before the line that says Ctrl-C stops it: a signal sent on reading it found none, and ended the process.
    const signals = serverSignals();
    const { demo, running } = started.serving;
    const rel = (p: string) => relative(process.cwd(), p);
    printLines([
      '',
      `Serving ${rel(started.dir)} at ${running.url}`,
      `  user:           ${demo.user}`,
      `  password file:  ${rel(demo.passwordFile)}`,
      `  CA certificate: ${rel(demo.caCertPath)}  (import it into the installer as trusted for outbound connections)`,
      `  try:            curl --cacert ${rel(demo.caCertPath)} -u ${demo.user}:"$(cat ${rel(demo.passwordFile)})" -I ${running.url}/${DEPOT_PATHS.catalog}`,
      'Ctrl-C stops it.',
    ]);
    await supervise(running, undefined, graceMs, CLI_SUPERVISION, signals);
  });
}

/** Each step of the quickstart as it ends: the depot on stderr, the verdict on stdout, the serving material made. */
function showStep(step: QuickstartStep): void {
  if (step.step === 'depot') {
    const { made, dir } = step;
    note(
      made
        ? `Made a ${made.release} demo depot in ${dir}: ${made.binaries} binaries in ${made.components.length} component folders.`
        : `Using the existing demo depot in ${dir}.`,
    );
  } else if (step.step === 'verified') printLines(formatVerifyResult(step.result));
  else if (step.demo.made.length > 0) note(`Made in ./${DEMO_PKI_DIR}: ${step.demo.made.join(', ')}.`);
}

/**
 * How to serve the depot made without serving it: a command that needs only
 * files that exist. The demo CA and password are made by serving, so before
 * then the hint is to serve.
 */
async function serveHint(): Promise<string[]> {
  const { demoPasswordFile, DEMO_USER } = await import('../server/demo.js');
  const passwordFile = demoPasswordFile(DEMO_PKI_DIR);
  const caDir = resolve(DEMO_PKI_DIR, 'ca');
  if (!(await exists(passwordFile)) || !(await exists(caDir)))
    return [`Serve it: ${startCommand()} (makes a CA, a server certificate and a password in ./${DEMO_PKI_DIR} first).`];
  const rel = (p: string) => relative(process.cwd(), p) || basename(p);
  return [
    `Serve it: ${startCommand()}, or: ${invokedAs()} serve ${DEMO_DEPOT_DIR} --ca ${rel(caDir)} --user ${DEMO_USER} --password-file ${rel(passwordFile)}`,
  ];
}
