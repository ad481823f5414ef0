/**
 * The auth cache (lib/core/auth-cache.ts) and the per-merchant window counter (lib/core/rate-limit.ts):
 * invalidation beats a lookup in flight, TTL and external writes drop entries; the counter is exact on
 * one holder, survives a restart through the store, and over-admits after a move of its holder by at
 * most the counts the old holder had not flushed.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { AuthCache } from '../../lib/core/auth-cache.ts';
import { RATE_LIMITS, WindowCounter, limitInStore } from '../../lib/core/rate-limit.ts';
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
    fc.assert(fc.property(fc.array(fc.constantFrom('begin', 'finish', 'drop', 'clear'), { maxLength: 30 }), (steps) => {
      const c = new AuthCache<number>({ ttlMs: 60_000 });
      let started: number | null = null;
      let value = 0;
      let stale = false;
      for (const s of steps) {
        if (s === 'begin') { started = c.generation; value++; stale = false; }
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
    }));
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

describe('per-merchant window counter', () => {
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

  const key = RATE_LIMITS.merchant.key('mer_x');
  const t0 = new Date('2026-01-01T00:00:10Z');

  it('counts exactly on one holder, per window', async () => {
    const c = new WindowCounter(store, { flushMs: 0 });
    const counts = await Promise.all(Array.from({ length: 50 }, () => c.hit(key, t0)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await c.hit(key, new Date('2026-01-01T00:01:00Z'))).toBe(1);
    await c.stop();
  });

  it('a restarted or new holder starts from what was flushed; the bound is what was not', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }), async (flushed, unflushed) => {
      const k = `${key}:${flushed}:${unflushed}:${Math.random()}`;
      const old = new WindowCounter(store, { flushMs: 0 });
      for (let i = 0; i < flushed; i++) await old.hit(k, t0);
      await old.flush(t0);
      for (let i = 0; i < unflushed; i++) await old.hit(k, t0);
      // the holder moves (crash before its next flush): the new one sees the flushed counts only
      const next = new WindowCounter(store, { flushMs: 0 });
      const seen = await next.hit(k, t0);
      expect(seen).toBe(flushed + 1);
      // the true count is flushed + unflushed + 1: under-counted by exactly the unflushed ones
      expect(flushed + unflushed + 1 - seen).toBe(unflushed);
      await old.stop();
      await next.stop();
    }), { numRuns: 25 });
  });

  it('limitInStore counts in the store and answers the scope\'s 429', async () => {
    for (let i = 0; i < 2; i++) await limitInStore(store, 'demo', 'client', 2, t0);
    await expect(limitInStore(store, 'demo', 'client', 2, t0)).rejects.toMatchObject({ code: 429, message: expect.stringMatching(/at most 2 a minute/) });
  });
});
