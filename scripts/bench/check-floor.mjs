// The floor under `depotkit check`'s start-up: the least a Node process can do to make the requests the check must
// make of a depot, as plain node:https on one kept-alive connection: a HEAD of every file of the tree, and a GET of
// each metadata file (everything outside PROD/COMP/). No probe, no findings, no second connection. Usage:
//   node scripts/bench/check-floor.mjs <https url> <ca file> <user> <password file> <depot dir>
import { readFileSync, readdirSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join, relative } from 'node:path';

const [url, caFile, user, passwordFile, depotDir] = process.argv.slice(2);
if (!depotDir) throw new Error('usage: check-floor.mjs <https url> <ca file> <user> <password file> <depot dir>');
const authorization = `Basic ${Buffer.from(`${user}:${readFileSync(passwordFile, 'utf8').trim()}`).toString('base64')}`;
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: readFileSync(caFile) });
const files = readdirSync(join(depotDir, 'PROD'), { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile())
  .map((e) => relative(depotDir, join(e.parentPath ?? e.path, e.name)));

const ask = (method, path) =>
  new Promise((resolve, reject) => {
    request(new URL(path, url), { method, agent, headers: { authorization } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode}`));
      res.resume().on('end', resolve);
    })
      .on('error', reject)
      .end();
  });
for (const file of files) {
  await ask('HEAD', file);
  if (!file.startsWith('PROD/COMP/')) await ask('GET', file);
}
agent.destroy();
