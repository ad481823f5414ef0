/**
 * The store with its operation latency measured (`store_operation_duration_seconds{op}`): a delegating
 * wrapper that times one call in SAMPLE_EVERY per operation (the others go straight to the adapter with no
 * extra promise), with one pre-bound histogram child per operation. Measured by `npm run bench:ops`:
 * timing every call added about a quarter to a SQLite `get`; sampled, the histogram keeps the same shape
 * (its `_count` is the sampled calls, not all of them; the first call of each operation is timed).
 */
import type { Histogram } from 'prom-client';
import type { Store } from './port.ts';

export const SAMPLE_EVERY = 16;

export function instrumentStore(inner: Store, histogram: Histogram<'op'>): Store {
  const timed = <A extends unknown[], R>(op: string, fn: (...a: A) => Promise<R>) => {
    const child = histogram.labels(op);
    let n = 0;
    const observe = (t0: number) => child.observe((performance.now() - t0) / 1000);
    return (...a: A): Promise<R> => {
      if (n++ % SAMPLE_EVERY !== 0) return fn(...a); // the first call of each op is timed
      const t0 = performance.now();
      const p = fn(...a);
      p.then(
        () => observe(t0),
        () => observe(t0),
      );
      return p;
    };
  };
  return {
    kind: inner.kind,
    ensure: (specs) => inner.ensure(specs),
    get: timed('get', (coll, id) => inner.get(coll, id)) as Store['get'],
    findOne: timed('find_one', (coll, filter) => inner.findOne(coll, filter)) as Store['findOne'],
    find: timed('find', (coll, filter, opts) => inner.find(coll, filter, opts)) as Store['find'],
    findWith: timed('find_with', (coll, filter, opts, lookups) => inner.findWith(coll, filter, opts, lookups)) as Store['findWith'],
    count: timed('count', (coll: string, filter) => inner.count(coll, filter)),
    write: timed('write', (ops) => inner.write(ops)),
    claimDue: timed('claim_due', (coll, opts) => inner.claimDue(coll, opts)) as Store['claimDue'],
    increment: timed('increment', (key: string, by: number, windowMs: number, now?: Date) => inner.increment(key, by, windowMs, now)),
    purgeExpired: (now) => inner.purgeExpired(now),
    close: () => inner.close(),
  };
}
