/**
 * Every rate limit of the service in one place: which subject it counts, its key in the store, and the
 * 429 message a client gets. All count requests in fixed one-minute windows.
 *
 * - `merchant`: requests per API key's merchant, up to its `rate_limit_per_minute`. The hot path: the count
 *   lives with the merchant's actor (merchant-actors `admit`, routed by merchant id with the Shard
 *   strategy, so one node counts for a merchant across the whole cluster) in a `WindowCounter`, which
 *   writes its counts behind to the store once a second and starts a window from the stored count.
 *   Exact while the cluster is stable. Bound on over-admission: when the node counting a merchant
 *   changes (it stops or crashes, or a node joins and the shard ring moves), the new one does not see what
 *   the old one admitted in its last flush interval (≤ 1 s of that merchant's requests), once per change.
 * - `bearer`, `public`, `demo`, `checkout_intent`: per user or per client (hashed IP), not on the hot
 *   path: an atomic counter in the store per request (`limitInStore`), exact on every node.
 */
import { rateLimited } from './errors.ts';
import type { Store } from '../store/port.ts';

export const RATE_WINDOW_MS = 60_000;

export type RateScope = 'merchant' | 'bearer' | 'public' | 'demo' | 'checkout_intent';

interface RateLimitDef {
  /** the counter's key in the store for a subject */
  key(subject: string): string;
  message(limit: number): string;
}

export const RATE_LIMITS: Record<RateScope, RateLimitDef> = {
  merchant: { key: (merchantId) => `rate:${merchantId}`, message: (n) => `rate limit of ${n} requests per minute exceeded, retry later` },
  bearer: { key: (userId) => `rate:${userId}`, message: (n) => `rate limit of ${n} requests per minute exceeded, retry later` },
  /** subject: `<onboarding step>:<client hash>` */
  public: { key: (subject) => `public:${subject}`, message: () => 'too many requests from this client, retry later' },
  demo: { key: (client) => `public:demo:${client}`, message: (n) => `too many demo sessions from this client (at most ${n} a minute); retry in a minute` },
  checkout_intent: { key: (client) => `catalog:intent:${client}`, message: () => 'too many checkout intents from this client, retry in a minute' },
};

/** The 429 of a scope. */
export function rateLimitError(scope: RateScope, limit: number) {
  return rateLimited(RATE_LIMITS[scope].message(limit));
}

/** Counts one request of `subject` in the store and throws the scope's 429 when it is over `limit`. */
export async function limitInStore(store: Store, scope: RateScope, subject: string, limit: number, now: Date): Promise<void> {
  const n = await store.increment(RATE_LIMITS[scope].key(subject), 1, RATE_WINDOW_MS, now);
  if (n > limit) throw rateLimitError(scope, limit);
}

interface Window { window: number; count: number; unflushed: number; loading: Promise<void> | null }

/**
 * In-memory fixed-window counts, written behind to the store's counters. A key's first use in a window
 * starts from the stored count (what earlier holders flushed), so a restart or a move of the counting
 * node loses at most one flush interval of counts.
 */
export class WindowCounter {
  private windows = new Map<string, Window>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private store: Store;
  private windowMs: number;

  constructor(store: Store, opts: { windowMs?: number; flushMs?: number } = {}) {
    this.store = store;
    this.windowMs = opts.windowMs ?? RATE_WINDOW_MS;
    const flushMs = opts.flushMs ?? 1000;
    if (flushMs > 0) {
      this.timer = setInterval(() => void this.flush().catch(() => undefined), flushMs);
      this.timer.unref();
    }
  }

  /** Counts one request of `key` at `now` and returns the window's count including it. */
  async hit(key: string, now: Date): Promise<number> {
    const window = Math.floor(now.getTime() / this.windowMs);
    let w = this.windows.get(key);
    if (!w || w.window !== window) {
      const fresh: Window = { window, count: 0, unflushed: 0, loading: null };
      // what earlier holders of this count flushed in this window (increment by 0 reads it)
      fresh.loading = this.store.increment(key, 0, this.windowMs, now).then((n) => { fresh.count += n; fresh.loading = null; });
      if (w && w.unflushed > 0) void this.flushOne(key, w).catch(() => undefined);
      this.windows.set(key, (w = fresh));
    }
    if (w.loading) await w.loading;
    w.count++;
    w.unflushed++;
    return w.count;
  }

  private async flushOne(key: string, w: Window): Promise<void> {
    const n = w.unflushed;
    if (n === 0) return;
    w.unflushed = 0;
    try {
      // counted into the window the requests were in, whenever the flush runs
      await this.store.increment(key, n, this.windowMs, new Date(w.window * this.windowMs));
    } catch (e) {
      w.unflushed += n;
      throw e;
    }
  }

  /** Writes the counts not yet stored; drops windows that are over. */
  flush(now = new Date()): Promise<void> {
    this.flushing ??= (async () => {
      try {
        const current = Math.floor(now.getTime() / this.windowMs);
        await Promise.all([...this.windows].map(async ([key, w]) => {
          if (w.loading) return;
          await this.flushOne(key, w);
          if (w.window < current && w.unflushed === 0 && this.windows.get(key) === w) this.windows.delete(key);
        }));
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
