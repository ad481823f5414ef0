/**
 * The listener lease by the holder's own clock: a holder that cannot renew counts it lost a margin before
 * it expires, so its time of holding never overlaps the time of the node that takes it over.
 */
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { Lease, LEASE_COLLECTION } from '../../lib/chains/lease.ts';

it('a holder that cannot renew has stopped before another node may take the lease over', async () => {
  const store = new SqliteStore(':memory:');
  await store.ensure([{ name: LEASE_COLLECTION }]);
  let t = Date.parse('2026-01-01T00:00:00Z');
  const now = () => new Date(t);
  const a = new Lease(store, 'ethereum:testnet', 'a', 10_000, now);
  const b = new Lease(store, 'ethereum:testnet', 'b', 10_000, now);
  expect(await a.hold()).toBe(true);
  expect(await b.hold()).toBe(false);
  // a is cut from the store from here on: it renews no more; walk the clock and compare beliefs
  for (let ms = 0; ms <= 12_000; ms += 100) {
    t = Date.parse('2026-01-01T00:00:00Z') + ms;
    const bHolds = await b.hold();
    expect([ms, a.held && bHolds]).toEqual([ms, false]);
    if (ms < 9000) expect([ms, a.held]).toEqual([ms, true]);
    if (ms >= 9000) expect([ms, a.held]).toEqual([ms, false]);
    if (ms >= 10_000) expect([ms, bHolds]).toEqual([ms, true]);
  }
  await store.close();
});

it('a renewal whose answer comes back after the lease would have lapsed does not count as holding it', async () => {
  const store = new SqliteStore(':memory:');
  await store.ensure([{ name: LEASE_COLLECTION }]);
  let t = Date.parse('2026-01-01T00:00:00Z');
  const now = () => new Date(t);
  // the store answers a write only after `stall` ms of the holder's clock (a link cut, healed late)
  let stall = 0;
  const slow = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'write') return typeof v === 'function' ? v.bind(target) : v;
      return async (...args: Parameters<SqliteStore['write']>) => {
        const out = await target.write(...args);
        t += stall;
        return out;
      };
    },
  });
  const a = new Lease(slow, 'ethereum:testnet', 'a', 10_000, now);
  expect(await a.hold()).toBe(true);
  t += 5000; // due for renewal
  stall = 9500; // the renewal lands, but its answer arrives inside the margin before the new expiry
  expect(await a.hold()).toBe(false);
  expect(a.held).toBe(false);
  stall = 0;
  t += 100;
  expect(await a.hold()).toBe(true); // a prompt renewal holds it again
  await store.close();
});
