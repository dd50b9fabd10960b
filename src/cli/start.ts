import { relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEPOT_PATHS, SERVE_DEFAULT_GRACE_SECONDS, SERVE_DEFAULT_PORT } from '../constants.js';
import { EXIT } from '../util/errors.js';
import { exists } from '../util/fs.js';
import { formatVerifyResult } from './depot.js';
import { note, parseIntOption, printLines } from './output.js';
import { runDepot, supervise } from './serve.js';

export const DEMO_DEPOT_DIR = 'demo-depot';
export const DEMO_PKI_DIR = 'demo-pki';

/** `npm start`: the main job on an embedded default. */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(`make ./${DEMO_DEPOT_DIR} if it is not there, verify it, then serve it over HTTPS with Basic auth (CA and password in ./${DEMO_PKI_DIR})`)
    .option('--no-serve', 'only make and verify the depot')
    .option('--host <addr>', 'address to serve on', '127.0.0.1')
    .option('--port <n>', 'port to serve on', parseIntOption('--port'), SERVE_DEFAULT_PORT)
    .action(async (opts: { serve: boolean; host: string; port: number }) => {
      const [{ makeDemoDepot }, { verifyDepot }] = await Promise.all([import('../depot/demo.js'), import('../depot/verify.js')]);
      const dir = resolve(DEMO_DEPOT_DIR);
      // The demo writes its catalog last: without it, an earlier run was interrupted and is made again.
      if (await exists(resolve(dir, DEPOT_PATHS.catalog))) {
        note(`Using the existing demo depot in ${dir}.`);
      } else {
        const made = await makeDemoDepot(dir, { force: true });
        note(`Made a ${made.release} demo depot in ${dir}: ${made.binaries} binaries in ${made.components.length} component folders.`);
      }
      const result = await verifyDepot(dir, { deep: true });
      printLines(formatVerifyResult(result));
      if (!opts.serve || !result.ok) {
        if (result.ok) printLines(['', `Serve it: npm start, or: npx depotkit serve ${DEMO_DEPOT_DIR} --ca ${DEMO_PKI_DIR}/ca --user depot --password-file <file>`]);
        process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
        return;
      }
      const { prepareDemoServing } = await import('../server/demo.js');
      const demo = await prepareDemoServing(DEMO_PKI_DIR);
      if (demo.made.length > 0) note(`Made in ./${DEMO_PKI_DIR}: ${demo.made.join(', ')}.`);
      const running = await runDepot(
        { root: dir, host: opts.host, port: opts.port, tls: { certFile: demo.certPath, keyFile: demo.keyPath }, auth: { user: demo.user, password: demo.password } },
        1,
        SERVE_DEFAULT_GRACE_SECONDS * 1000,
      );
      const rel = (p: string) => relative(process.cwd(), p);
      printLines([
        '',
        `Serving ${rel(dir)} at ${running.url}`,
        `  user:           ${demo.user}`,
        `  password file:  ${rel(demo.passwordFile)}`,
        `  CA certificate: ${rel(demo.caCertPath)}  (import it into the installer as trusted for outbound connections)`,
        `  try:            curl --cacert ${rel(demo.caCertPath)} -u ${demo.user}:"$(cat ${rel(demo.passwordFile)})" -I ${running.url}/${DEPOT_PATHS.catalog}`,
        'Ctrl-C stops it.',
      ]);
      await supervise(running, undefined, SERVE_DEFAULT_GRACE_SECONDS * 1000);
      process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
    });
}
