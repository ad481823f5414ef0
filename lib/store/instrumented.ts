/**
 * The store with its operation latency measured (`store_operation_duration_seconds{op}`): a delegating
 * wrapper, one pre-bound histogram child per operation, so a call costs two clock reads and one observe.
 */
import type { Histogram } from 'prom-client';
import type { Store } from './port.ts';

export function instrumentStore(inner: Store, histogram: Histogram<'op'>): Store {
  const timed = <A extends unknown[], R>(op: string, fn: (...a: A) => Promise<R>) => {
    const child = histogram.labels(op);
    return async (...a: A): Promise<R> => {
      const t0 = performance.now();
      try {
        return await fn(...a);
      } finally {
        child.observe((performance.now() - t0) / 1000);
      }
    };
  };
  return {
    kind: inner.kind,
    ensure: (specs) => inner.ensure(specs),
    get: timed('get', (coll, id) => inner.get(coll, id)) as Store['get'],
    findOne: timed('find_one', (coll, filter) => inner.findOne(coll, filter)) as Store['findOne'],
    find: timed('find', (coll, filter, opts) => inner.find(coll, filter, opts)) as Store['find'],
    count: timed('count', (coll: string, filter) => inner.count(coll, filter)),
    write: timed('write', (ops) => inner.write(ops)),
    claimDue: timed('claim_due', (coll, opts) => inner.claimDue(coll, opts)) as Store['claimDue'],
    increment: timed('increment', (key: string, by: number, windowMs: number, now?: Date) => inner.increment(key, by, windowMs, now)),
    purgeExpired: (now) => inner.purgeExpired(now),
    close: () => inner.close(),
  };
}
