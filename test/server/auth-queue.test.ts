import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { RecentCounts } from '../../src/server/auth-limit.js';
import { createAuthenticator, type AuthVerdict } from '../../src/server/auth.js';
import { createHashPool, HashPoolBusy } from '../../src/server/hash-pool.js';
import { credentialKey, userKey } from '../../src/server/htpasswd.js';
import { SuccessCache } from '../../src/server/success-cache.js';
import { useTempDir } from '../helpers/temp.js';
import { basic } from './helpers.js';

describe('the queue of bcrypt checks', () => {
  const hash = bcrypt.hashSync('right', 8);

  it('runs the waiting check of the lowest rank next, read when it is picked; when full, a lower rank turns away the highest', async () => {
    const pool = createHashPool(1, 4);
    const order: string[] = [];
    const settled: Promise<unknown>[] = [];
    const submit = (name: string, rank: () => number) => {
      const p = pool.compare('wrong', hash, rank).then(
        () => order.push(name),
        (err: unknown) => order.push(err instanceof HashPoolBusy ? `${name} busy` : `${name} ${String(err)}`),
      );
      settled.push(p);
    };
    let lateRank = 3;
    try {
      // The first runs at once; three wait, and the pool is full.
      submit('running', () => 0);
      submit('a5', () => 5);
      submit('late', () => lateRank);
      submit('b5', () => 5);
      // A lower rank takes the place of the highest waiting (the newest among equals); an equal or higher one is
      // turned away itself.
      submit('low', () => 1);
      submit('equal', () => 5);
      submit('high', () => 7);
      // Ranks are read again when the next check is picked: this one now comes first.
      lateRank = 0;
      await Promise.all(settled);
    } finally {
      await pool.close();
    }
    expect(order).toEqual(['b5 busy', 'equal busy', 'high busy', 'running', 'late', 'low', 'a5']);
  });
});

describe('what the authenticator keeps of credentials', () => {
  it('keys the cache by an HMAC of user and password that no other split of the same bytes gives', () => {
    expect(credentialKey('depot', 'right')).toBe(credentialKey('depot', 'right'));
    expect(credentialKey('a\0b', 'c')).not.toBe(credentialKey('a', 'b\0c'));
    expect(credentialKey('ab', 'c')).not.toBe(credentialKey('a', 'bc'));
    expect(credentialKey('depot', 'right')).not.toContain('right');
    expect(userKey('x'.repeat(16_000))).toHaveLength(userKey('depot').length);
  });

  it('remembers successes for their time, at most so many, the least recently used forgotten first', () => {
    const cache = new SuccessCache(2, 1_000);
    cache.add('a', 0);
    cache.add('b', 0);
    expect(cache.has('a', 500)).toBe(true);
    // 'b' is now the least recently used: the third entry pushes it out, not 'a'.
    cache.add('c', 500);
    expect(cache.has('b', 600)).toBe(false);
    expect(cache.has('a', 600)).toBe(true);
    expect(cache.has('a', 1_000)).toBe(false);
  });

  it('counts the checks each key asked for, halving each half-life, and forgets the least recently counted', () => {
    const counts = new RecentCounts(1_000, 2);
    counts.add('a', 0);
    counts.add('a', 0);
    expect(counts.get('a', 0)).toBe(2);
    expect(counts.get('a', 1_000)).toBe(1);
    expect(counts.get('b', 0)).toBe(0);
    counts.add('b', 0);
    counts.add('c', 0);
    expect(counts.get('a', 0)).toBe(0);
    expect(counts.get('c', 0)).toBe(1);
  });
});

describe('password checks under a flood, in one process', () => {
  const tmp = useTempDir();
  let htpasswd: string;

  beforeAll(async () => {
    htpasswd = join(tmp.dir, 'htpasswd');
    await writeFile(htpasswd, `depot:${bcrypt.hashSync('right', 8)}\nsecond:${bcrypt.hashSync('other', 8)}\n`);
  });

  it('a user who knows the password is checked before the flood; the refused attempts of the flood use up its budget', async () => {
    const auth = await createAuthenticator({ htpasswdFile: htpasswd }, { threads: 1, maxPending: 4, failures: 4, refillMs: 60_000 });
    try {
      const attackers = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];
      // Four wrong passwords at once from each of five addresses: four checks fit, the rest are turned away.
      const flood: Promise<AuthVerdict>[] = attackers.flatMap((a) => [0, 1, 2, 3].map((i) => auth.check(basic('depot', `${a}-${i}`), a)));
      // Meanwhile two users log in for the first time: each takes the place of a check of the flood.
      const users = await Promise.all([auth.check(basic('depot', 'right'), '10.0.1.1'), auth.check(basic('second', 'other'), '10.0.1.2')]);
      expect(users).toEqual([
        { ok: true, user: 'depot' },
        { ok: true, user: 'second' },
      ]);
      const answers = (await Promise.all(flood)).map((v) => (v.ok ? 200 : v.status));
      expect(answers.filter((s) => s === 503).length).toBeGreaterThanOrEqual(16);
      // Every attempt, computed or turned away, took a token: each address has used its four and now waits.
      for (const a of attackers) expect(await auth.check(basic('depot', 'again'), a)).toMatchObject({ ok: false, status: 429 });
    } finally {
      await auth.close();
    }
  });
});
