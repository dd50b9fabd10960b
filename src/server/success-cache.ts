/**
 * Keys of credentials found right, each for `ttlMs`, at most `maxEntries` of them: the least recently used is
 * forgotten first, so that many users logging in never empty the cache of those downloading.
 */
export class SuccessCache {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
  ) {}

  add(key: string, now = Date.now()): void {
    this.until.delete(key);
    this.until.set(key, now + this.ttlMs);
    while (this.until.size > this.maxEntries) this.until.delete(this.until.keys().next().value!);
  }

  /** Whether `key` was found right less than `ttlMs` ago; a hit becomes the most recently used. */
  has(key: string, now = Date.now()): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    this.until.delete(key);
    if (until <= now) return false;
    this.until.set(key, until);
    return true;
  }

  clear(): void {
    this.until.clear();
  }
}
