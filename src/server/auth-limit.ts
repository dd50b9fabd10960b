import { isIPv6 } from 'node:net';

export interface FailureLimits {
  /** Password checks a client address may fail in a row before it must wait. */
  burst: number;
  /** One more failure is allowed each time this many milliseconds pass (up to `burst`). */
  refillMs: number;
  /** Addresses remembered at most; the least recently seen are forgotten first. */
  maxClients: number;
}

/**
 * The key of a client address: an IPv4 address (also when mapped into IPv6) as such, an IPv6 address
 * by its /64, which is what one host, or one attacker, is usually given.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return '-';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket of password checks per client address. A check that has to be computed takes a token
 * before it starts (so a client cannot start more than `burst` at once) and gives it back when the
 * password was right; a wrong one keeps it. With no token left the client waits: `take` returns the
 * seconds to wait (for Retry-After) instead.
 */
export class FailureLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limits: FailureLimits) {}

  private refreshed(key: string, now: number): Bucket {
    const b = this.buckets.get(key) ?? { tokens: this.limits.burst, at: now };
    const earned = Math.floor((now - b.at) / this.limits.refillMs);
    if (earned > 0) {
      b.tokens = Math.min(this.limits.burst, b.tokens + earned);
      b.at = b.tokens === this.limits.burst ? now : b.at + earned * this.limits.refillMs;
    }
    return b;
  }

  /** Takes a token for a check by `key`; returns undefined when taken, else the whole seconds to wait. */
  take(key: string, now = Date.now()): number | undefined {
    const b = this.refreshed(key, now);
    if (b.tokens < 1) return Math.max(1, Math.ceil((b.at + this.limits.refillMs - now) / 1000));
    b.tokens -= 1;
    // Most recently seen last: the first ones are the ones to forget.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    while (this.buckets.size > this.limits.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    return undefined;
  }

  /** Gives back the token of a check that succeeded (or was never computed). */
  give(key: string, now = Date.now()): void {
    const b = this.buckets.get(key);
    if (!b) return;
    this.refreshed(key, now);
    b.tokens = Math.min(this.limits.burst, b.tokens + 1);
    if (b.tokens === this.limits.burst) this.buckets.delete(key);
  }
}

/**
 * How many checks each key (a client address, a user name) asked for lately: each `add` counts one, and every
 * count halves each `halfLifeMs`. At most `maxKeys` are remembered, the least recently counted forgotten first.
 */
export class RecentCounts {
  private readonly counts = new Map<string, { value: number; at: number }>();

  constructor(
    private readonly halfLifeMs: number,
    private readonly maxKeys: number,
  ) {}

  get(key: string, now = Date.now()): number {
    const c = this.counts.get(key);
    return c ? c.value * 2 ** (-(now - c.at) / this.halfLifeMs) : 0;
  }

  add(key: string, now = Date.now()): void {
    const value = this.get(key, now) + 1;
    this.counts.delete(key);
    this.counts.set(key, { value, at: now });
    if (this.counts.size > this.maxKeys) this.counts.delete(this.counts.keys().next().value!);
  }
}
