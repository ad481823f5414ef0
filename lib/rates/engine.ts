/**
 * Spot rates: per pair, the configured sources in order (config/rates.ts; a stablecoin's peg is the last). The first value not older than
 * RATES_MAX_AGE wins; when none is that fresh, the freshest value not older than RATES_REFUSE_AGE is served
 * with stale: true; with nothing at all a RateUnavailableError (503): a number is never invented.
 * Fetched values are kept in the store (`rates_cache`) for RATES_CACHE_TTL, so all nodes share one fetch,
 * and a completing session records the cached value without any network call (cachedRate).
 */
import type { Doc, Store } from '../store/port.ts';
import type { Config } from '../../config/index.ts';
import { sourcesFor, type ChainlinkFeed, type RateSourceName, type RatesConfig } from '../../config/rates.ts';
import { chainlinkRate, httpRate, SourceRefusal, type SourceValue } from './sources.ts';
import type { SpotRate } from '../core/rate.ts';
import { PEGS } from './peg.ts';

export interface RateView extends SpotRate {
  stale: boolean;
}

interface CacheDoc extends Doc {
  base: string;
  quote: string;
  rate: string;
  source: string;
  as_of: string;
  fetched_at: string;
}

export class RateUnavailableError extends Error {
  readonly base: string;
  readonly quote: string;
  /** false when no source is configured for the pair at all: only a setting helps, not a retry */
  readonly retryable: boolean;
  constructor(base: string, quote: string, reasons: string[]) {
    super(
      `no rate for ${base}/${quote} is available from a fresh-enough source${reasons.length ? ` (${reasons.join('; ')})` : ' (no source is configured for this pair)'}`,
    );
    this.base = base;
    this.quote = quote;
    this.retryable = reasons.length > 0;
  }
}

export interface RateFetchers {
  chainlink(rpcUrl: string, feed: ChainlinkFeed, now: Date, maxAgeMs: number): Promise<SourceValue>;
  http(baseUrl: string, id: string, quote: string, apiKey: string, now: Date): Promise<SourceValue>;
}

const DEFAULT_FETCHERS: RateFetchers = { chainlink: chainlinkRate, http: httpRate };
const COLL = 'rates_cache';

const pairKey = (base: string, quote: string) => `${base}:${quote}`;
const view = (c: RatesConfig, r: SpotRate, now: Date): RateView => ({ ...r, stale: now.getTime() - Date.parse(r.as_of) > c.maxAgeMs });

/** The sources that answer without a network call: the static table and the pegs. */
function offlineValue(c: RatesConfig, source: RateSourceName, key: string): string | undefined {
  if (source === 'static') return c.static[key];
  if (source === 'peg') return PEGS[key];
  return undefined;
}

/** The first offline source of a pair in its configured order, when it has a value. */
function offlineRate(c: RatesConfig, base: string, quote: string, now: Date): SpotRate | null {
  const key = pairKey(base, quote);
  for (const source of sourcesFor(c, key)) {
    const value = offlineValue(c, source, key);
    if (value) return { base, quote, rate: value, source, as_of: now.toISOString() };
  }
  return null;
}

/**
 * What the store already knows (or the static table says), without any network call: the rate a
 * completing session records. Null when there is none younger than RATES_REFUSE_AGE.
 */
export async function cachedRate(store: Store, c: RatesConfig, base: string, quote: string, now: Date): Promise<RateView | null> {
  const doc = await store.get<CacheDoc>(COLL, pairKey(base, quote));
  if (doc && now.getTime() - Date.parse(doc.as_of) <= c.refuseAgeMs) {
    return view(c, { base, quote, rate: doc.rate, source: doc.source, as_of: doc.as_of }, now);
  }
  const offline = offlineRate(c, base, quote, now);
  return offline ? view(c, offline, now) : null;
}

export class RatesEngine {
  private inflight = new Map<string, Promise<RateView>>();
  private store: Store;
  private config: Pick<Config, 'rates' | 'chains'>;
  private now: () => Date;
  private fetchers: RateFetchers;

  constructor(
    store: Store,
    config: Pick<Config, 'rates' | 'chains'>,
    now: () => Date = () => new Date(),
    fetchers: RateFetchers = DEFAULT_FETCHERS,
  ) {
    this.store = store;
    this.config = config;
    this.now = now;
    this.fetchers = fetchers;
  }

  /** The rate of a pair: from the shared cache while it is younger than RATES_CACHE_TTL, else from the sources. */
  rate(base: string, quote: string): Promise<RateView> {
    const key = pairKey(base, quote);
    let p = this.inflight.get(key);
    if (!p) {
      // one fetch per pair and process at a time
      p = this.resolve(base, quote).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async resolve(base: string, quote: string): Promise<RateView> {
    const c = this.config.rates;
    const key = pairKey(base, quote);
    const now = this.now();
    const cached = await this.store.get<CacheDoc>(COLL, key);
    if (
      cached &&
      now.getTime() - Date.parse(cached.fetched_at) < c.cacheTtlMs &&
      now.getTime() - Date.parse(cached.as_of) <= c.refuseAgeMs
    ) {
      return view(c, { base, quote, rate: cached.rate, source: cached.source, as_of: cached.as_of }, now);
    }
    const reasons: string[] = [];
    let best: SpotRate | null = null;
    for (const source of sourcesFor(c, key)) {
      let value: SourceValue;
      try {
        const v = await this.fromSource(source, base, quote, now);
        if (!v) continue;
        value = v;
      } catch (e) {
        reasons.push(`${source}: ${e instanceof SourceRefusal ? e.message : 'unreachable'}`);
        continue;
      }
      const age = now.getTime() - value.as_of.getTime();
      if (age > c.refuseAgeMs) {
        reasons.push(`${source}: value from ${value.as_of.toISOString()} is too old`);
        continue;
      }
      const r: SpotRate = { base, quote, rate: value.rate, source, as_of: value.as_of.toISOString() };
      if (age <= c.maxAgeMs) {
        best = r;
        break;
      }
      // stale: a later source may be fresh; keep the freshest stale one meanwhile
      if (!best || Date.parse(r.as_of) > Date.parse(best.as_of)) best = r;
    }
    if (best) {
      const doc: CacheDoc = {
        id: key,
        base,
        quote,
        rate: best.rate,
        source: best.source,
        as_of: best.as_of,
        fetched_at: now.toISOString(),
      };
      await this.store.write([{ op: 'upsert', coll: COLL, doc }]);
      return view(c, best, now);
    }
    // every source failed now: the last known value while it is not too old, flagged by its age
    if (cached && now.getTime() - Date.parse(cached.as_of) <= c.refuseAgeMs) {
      return view(c, { base, quote, rate: cached.rate, source: cached.source, as_of: cached.as_of }, now);
    }
    throw new RateUnavailableError(base, quote, reasons);
  }

  /** null: the source has nothing configured for this pair (skipped silently). */
  private async fromSource(source: RateSourceName, base: string, quote: string, now: Date): Promise<SourceValue | null> {
    const c = this.config.rates;
    const key = pairKey(base, quote);
    if (source === 'static' || source === 'peg') {
      const v = offlineValue(c, source, key);
      return v ? { rate: v, as_of: now } : null;
    }
    if (source === 'http') {
      const id = c.httpIds[base];
      return c.httpUrl && id ? this.fetchers.http(c.httpUrl, id, quote, c.httpApiKey, now) : null;
    }
    const feed = c.chainlinkFeeds[key];
    const rpcUrl = feed ? this.config.chains[feed.chain][feed.network].rpcUrl : '';
    return feed && rpcUrl ? this.fetchers.chainlink(rpcUrl, feed, now, c.refuseAgeMs) : null;
  }
}
