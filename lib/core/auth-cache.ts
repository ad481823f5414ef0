/**
 * A short cache of what authenticating an API key reads (the key's record and the few merchant fields the
 * gateway needs), so that a request does not hash-look-up the key and read the merchant every time.
 *
 * A change must take effect at once on every node, so an entry goes away:
 * - when the merchant actor commits any change of that merchant (rotation, revocation, rate limit, …):
 *   the merchant-actors service tells every API node and waits for their acknowledgements;
 * - when another process sharing the SQLite file has committed anything (`externalVersion`), since its
 *   merchant actors cannot reach this node (the embedded operator tool);
 * - after `ttlMs` in any case, the bound for a node that missed a message (a partition).
 * A lookup that started before an invalidation never stores its (possibly old) result: every
 * invalidation moves a generation on, and `set` only stores under the generation its lookup began in.
 * Unknown keys are never cached: each attempt with a wrong key reaches the store.
 */

import { trimOldest } from './bounded.ts';

export interface AuthCacheOptions {
  ttlMs: number;
  /** entries kept at most (oldest dropped first) */
  max?: number;
  now?: () => number;
  /** a number that changes when another process wrote to the store (SQLite data_version) */
  externalVersion?: () => number;
}

interface Entry<V> {
  value: V;
  merchantId: string;
  until: number;
}

export class AuthCache<V> {
  private entries = new Map<string, Entry<V>>();
  private gen = 0;
  private external: number | undefined;
  private readonly opts: Required<Omit<AuthCacheOptions, 'externalVersion'>> & Pick<AuthCacheOptions, 'externalVersion'>;

  constructor(opts: AuthCacheOptions) {
    this.opts = { max: 10_000, now: Date.now, ...opts };
    this.external = opts.externalVersion?.();
  }

  /** The generation a lookup starts in; pass it to `set`. */
  get generation(): number {
    this.checkExternal();
    return this.gen;
  }

  get(keyHash: string): V | undefined {
    if (this.opts.ttlMs <= 0) return undefined;
    this.checkExternal();
    const e = this.entries.get(keyHash);
    if (!e) return undefined;
    if (e.until <= this.opts.now()) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return e.value;
  }

  /** Stores a lookup's result unless something was invalidated since the lookup began. */
  set(keyHash: string, merchantId: string, value: V, generation: number): void {
    if (this.opts.ttlMs <= 0 || generation !== this.gen) return;
    trimOldest(this.entries, this.opts.max - 1);
    this.entries.set(keyHash, { value, merchantId, until: this.opts.now() + this.opts.ttlMs });
  }

  /** Drops every entry of a merchant (each of its keys). */
  dropMerchant(merchantId: string): void {
    this.gen++;
    for (const [k, e] of this.entries) if (e.merchantId === merchantId) this.entries.delete(k);
  }

  clear(): void {
    this.gen++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private checkExternal(): void {
    if (!this.opts.externalVersion) return;
    const v = this.opts.externalVersion();
    if (v !== this.external) {
      this.external = v;
      this.clear();
    }
  }
}
