/**
 * A map of things dear to make (a parsed certificate's facts, a TLS context) by a key that repeats
 * across a fleet's consumers: each made once, and all forgotten at once when `max` are held, so that
 * a long run over ever new keys holds no more than that.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly max: number) {}

  /** The value kept for `key`, else made by `make` and kept; a `make` that throws keeps nothing. */
  get(key: K, make: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = make();
      if (this.entries.size >= this.max) this.entries.clear();
      this.entries.set(key, value);
    }
    return value;
  }
}
