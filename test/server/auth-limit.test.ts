import { describe, expect, it } from 'vitest';
import { clientKey, FailureLimiter } from '../../src/server/auth-limit.js';

describe('failed password checks per client address', () => {
  it('keys IPv4 (mapped or not) by address and IPv6 by its /64', () => {
    expect(clientKey('10.0.0.5')).toBe('10.0.0.5');
    expect(clientKey('::ffff:10.0.0.5')).toBe('10.0.0.5');
    expect(clientKey('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(clientKey('2001:0db8:0000:0001:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey(undefined)).toBe('-');
  });

  it('lets `burst` checks fail, then makes the client wait for the next token; right passwords give theirs back', () => {
    const limiter = new FailureLimiter({ burst: 3, refillMs: 6_000, maxClients: 100 });
    const t0 = 1_000_000;
    // Three failures (taken, never given back), then a wait of one refill.
    for (let i = 0; i < 3; i++) expect(limiter.take('a', t0)).toBeUndefined();
    expect(limiter.take('a', t0)).toBe(6);
    expect(limiter.take('a', t0 + 4_500)).toBe(2);
    expect(limiter.take('b', t0)).toBeUndefined();
    // One token per refill period, not more.
    expect(limiter.take('a', t0 + 6_000)).toBeUndefined();
    expect(limiter.take('a', t0 + 6_001)).toBe(6);
    // A success gives its token back: a client that logs in right never waits.
    const ok = new FailureLimiter({ burst: 2, refillMs: 6_000, maxClients: 100 });
    for (let i = 0; i < 10; i++) {
      expect(ok.take('c', t0)).toBeUndefined();
      ok.give('c', t0);
    }
  });

  it('forgets the least recently seen addresses beyond maxClients', () => {
    const limiter = new FailureLimiter({ burst: 1, refillMs: 60_000, maxClients: 2 });
    for (const key of ['a', 'b', 'c']) expect(limiter.take(key, 0)).toBeUndefined();
    // 'a' was forgotten: it may try again; 'c' is still waiting.
    expect(limiter.take('a', 1)).toBeUndefined();
    expect(limiter.take('c', 1)).toBeGreaterThan(0);
  });
});
