// The simulated installers of a fleet benchmark, in a process of their own so that their CPU is
// counted apart from the client's and the depot's. Started by fleet-scale.ts:
//   node --import tsx scripts/bench/fleet-sims.ts <dist> <count> <cert.pem> <key.pem> <user> <password file>
// It starts <count> simulators of <dist> (a build: the simulators of the build under test), all
// sharing the given certificate, prints their URLs as one JSON line, and closes them when its
// standard input ends.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Simulators = typeof import('../../src/simulators/installer/index.js');

const [dist, count, certFile, keyFile, user, passwordFile] = process.argv.slice(2);
if (!dist || !count || !certFile || !keyFile || !user || !passwordFile)
  throw new Error('usage: fleet-sims.ts <dist> <count> <cert> <key> <user> <password file>');
const { startInstallerSimulator } = (await import(pathToFileURL(join(dist, 'simulators/installer/index.js')).href)) as Simulators;
const tls = { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
const password = readFileSync(passwordFile, 'utf8').trim();

const sims: Array<Awaited<ReturnType<Simulators['startInstallerSimulator']>>> = [];
for (let i = 0; i < Number(count); i++) sims.push(await startInstallerSimulator({ users: { [user]: password }, tls }));
process.stdout.write(`${JSON.stringify(sims.map((s) => s.url))}\n`);

process.stdin.resume();
process.stdin.once('end', () => {
  void Promise.all(sims.map((s) => s.close())).then(() => process.exit(0));
});
