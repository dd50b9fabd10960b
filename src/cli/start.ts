import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DEPOT_ROOT_DIR } from '../constants.js';
import { EXIT } from '../util/errors.js';
import { isDirectory } from '../util/fs.js';
import { formatVerifyResult } from './depot.js';
import { note, printLines } from './output.js';

export const DEMO_DEPOT_DIR = 'demo-depot';

/** `npm start`: the main job on an embedded default. */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(`make ./${DEMO_DEPOT_DIR} if it is not there, verify it, and say what to do next`)
    .action(async () => {
      const [{ makeDemoDepot }, { verifyDepot }] = await Promise.all([import('../depot/demo.js'), import('../depot/verify.js')]);
      const dir = resolve(DEMO_DEPOT_DIR);
      if (await isDirectory(resolve(dir, DEPOT_ROOT_DIR))) {
        note(`Using the existing demo depot in ${dir}.`);
      } else {
        const made = await makeDemoDepot(dir);
        note(`Made a ${made.release} demo depot in ${dir}: ${made.binaries} binaries in ${made.components.length} component folders.`);
      }
      const result = await verifyDepot(dir, { deep: true });
      printLines(formatVerifyResult(result));
      printLines([
        '',
        'Next:',
        `  npx depotkit cert ca --out demo-pki/ca                                  # a private CA`,
        `  npx depotkit cert issue --ca demo-pki/ca --dns depot.lab.local --out demo-pki/server`,
        `  npx depotkit serve ${DEMO_DEPOT_DIR} --cert demo-pki/server/server-chain.pem --key demo-pki/server/server-key.pem`,
      ]);
      process.exitCode = result.ok ? EXIT.ok : EXIT.problems;
    });
}
