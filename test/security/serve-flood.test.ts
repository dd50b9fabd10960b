// A flood of wrong passwords from many addresses against `depotkit serve --htpasswd`, beside
// connections that never finish a request: users who know their password still get their files. Bounded: the
// flood runs while the users make their requests, and every request has its own time limit.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPOT_PATHS } from '../../src/constants.js';
import { useTempDir } from '../helpers/temp.js';
import { until } from '../helpers/poll.js';
import { basic, makePki, spawnServe, tlsServeArgs, writeTree, type ServeChild } from '../server/helpers.js';
import { floodWrongPasswords, holdConnections, loopbackAddresses, timedGet, type Target } from './flood.js';

const CATALOG = '{"patches": {}}\n';

/** `count` requests one after the other, each on a new connection; their statuses, 0 for a wrong body. */
async function statuses(target: Target, user: string, password: string, from: string, count: number): Promise<number[]> {
  const got: number[] = [];
  for (let i = 0; i < count; i++) {
    const r = await timedGet(target, basic(user, password), from);
    got.push(r.status === 200 && r.body.toString() !== CATALOG ? 0 : r.status);
  }
  return got;
}

describe('serve --htpasswd under a flood of wrong passwords from many addresses', () => {
  const tmp = useTempDir();
  let root: string;
  let htpasswd: string;
  let ca: string;
  const children: ServeChild[] = [];

  beforeAll(async () => {
    root = await writeTree(join(tmp.dir, 'web'), { [DEPOT_PATHS.catalog]: CATALOG });
    htpasswd = join(tmp.dir, 'htpasswd');
    // Cost 10, a quarter of cost 12's time: the queue of checks is as full and ordered alike, the test shorter.
    await writeFile(htpasswd, `depot:${bcrypt.hashSync('right', 10)}\nsecond:${bcrypt.hashSync('other', 10)}\n`);
    const pki = await makePki();
    ca = pki.caCertPem;
    await writeFile(join(tmp.dir, 'cert.pem'), pki.certPem);
    await writeFile(join(tmp.dir, 'key.pem'), pki.keyPem, { mode: 0o600 });
  });
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
  });

  it.each([12, 30])(
    'from %i addresses: a user and a second user, neither logged in before, get every file they ask for',
    async (addresses) => {
      const serve = await spawnServe([...tlsServeArgs(root, tmp.dir), '--htpasswd', htpasswd, '--workers', '1']);
      children.push(serve);
      const target = { port: serve.port, ca, path: `/${DEPOT_PATHS.catalog}` };
      const loris = await holdConnections(target, 200, '127.0.200.1');
      // Two clients per address, wrong passwords for the user who logs in below, each sent as soon as the last
      // was answered: more checks at once than the server queues.
      // (127.0.12.x or 127.0.30.x: neither the users' addresses nor those of the connections held open.)
      const flood = floodWrongPasswords(target, 'depot', loopbackAddresses(addresses, addresses), 2);
      try {
        await until(() => (flood.answers.get(503) ?? 0) + (flood.answers.get(429) ?? 0) > 0, 'the flood to be turned away', { timeoutMs: 30_000 });
        const [user, second] = await Promise.all([statuses(target, 'depot', 'right', '127.0.0.1', 8), statuses(target, 'second', 'other', '127.0.201.1', 4)]);
        expect(user).toEqual(Array<number>(8).fill(200));
        expect(second).toEqual(Array<number>(4).fill(200));
      } finally {
        const answers = await flood.stop();
        loris.close();
        // The flood was real: its wrong passwords were checked and refused.
        expect(answers.get(401) ?? 0).toBeGreaterThan(0);
      }
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    },
    90_000,
  );
});
