/**
 * The auth cache (lib/core/auth-cache.ts) and the rate limits (lib/core/rate-limit.ts): invalidation beats
 * a lookup in flight, TTL and external writes drop entries; counts are exact, also within one turn.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { AuthCache } from '../../lib/core/auth-cache.ts';
import { RATE_LIMITS, limitInStore } from '../../lib/core/rate-limit.ts';
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { tempDir } from '../helpers/node.ts';

describe('auth cache', () => {
  it('serves an entry until its TTL, and drops it when its merchant changes', () => {
    let now = 1000;
    const c = new AuthCache<string>({ ttlMs: 500, now: () => now });
    c.set('k1', 'mer_a', 'a1', c.generation);
    c.set('k2', 'mer_a', 'a2', c.generation);
    c.set('k3', 'mer_b', 'b', c.generation);
    expect(c.get('k1')).toBe('a1');
    c.dropMerchant('mer_a');
    expect([c.get('k1'), c.get('k2'), c.get('k3')]).toEqual([undefined, undefined, 'b']);
    now += 500;
    expect(c.get('k3')).toBeUndefined();
  });

  it('never stores a lookup that began before an invalidation (any interleaving)', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('begin', 'finish', 'drop', 'clear'), { maxLength: 30 }), (steps) => {
        const c = new AuthCache<number>({ ttlMs: 60_000 });
        let started: number | null = null;
        let value = 0;
        let stale = false;
        for (const s of steps) {
          if (s === 'begin') {
            started = c.generation;
            value++;
            stale = false;
          }
          if ((s === 'drop' || s === 'clear') && started !== null) stale = true;
          if (s === 'drop') c.dropMerchant('m');
          if (s === 'clear') c.clear();
          if (s === 'finish' && started !== null) {
            c.set('k', 'm', value, started);
            expect(c.get('k')).toBe(stale ? undefined : value);
            c.clear();
            started = null;
          }
        }
      }),
    );
  });

  it('drops everything when another process wrote, and caches nothing with a TTL of 0', () => {
    let version = 1;
    const c = new AuthCache<string>({ ttlMs: 60_000, externalVersion: () => version });
    c.set('k', 'm', 'v', c.generation);
    expect(c.get('k')).toBe('v');
    version = 2;
    expect(c.get('k')).toBeUndefined();
    const off = new AuthCache<string>({ ttlMs: 0 });
    off.set('k', 'm', 'v', off.generation);
    expect(off.get('k')).toBeUndefined();
  });
});

describe('rate limits in the store', () => {
  let dir: string;
  let store: SqliteStore;
  beforeEach(async () => {
    dir = tempDir('rate-');
    store = new SqliteStore(join(dir, 'db.sqlite'));
    await store.ensure([]);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const t0 = new Date('2026-01-01T00:00:10Z');

  it('counts every request exactly, per window, even all in one turn', async () => {
    const results = await Promise.allSettled(Array.from({ length: 12 }, () => limitInStore(store, 'merchant', 'mer_x', 10, t0)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      code: 429,
      message: 'rate limit of 10 requests per minute exceeded, retry later',
    });
    await expect(limitInStore(store, 'merchant', 'mer_x', 10, new Date('2026-01-01T00:01:00Z'))).resolves.toBeUndefined();
    expect(RATE_LIMITS.merchant.key('mer_x')).toBe('rate:mer_x');
  });

  it("limitInStore answers the scope's 429", async () => {
    for (let i = 0; i < 2; i++) await limitInStore(store, 'demo', 'client', 2, t0);
    await expect(limitInStore(store, 'demo', 'client', 2, t0)).rejects.toMatchObject({
      code: 429,
      message: expect.stringMatching(/at most 2 a minute/),
    });
  });
});
