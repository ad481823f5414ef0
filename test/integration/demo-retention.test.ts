/**
 * Public demo sessions do not grow the store forever: one is purged a day after it expires (merchants'
 * sessions never are), and its address is watched by the chain listeners only until it expires.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, ETH_USDC } from './sessions-helpers.ts';
import { SessionAddressBook } from '../../lib/chains/address-book.ts';

describe('demo session retention', () => {
  let t: TestNode;
  let offset = 0;
  beforeAll(async () => {
    t = await startTestNode({}, { now: () => new Date(Date.now() + offset) });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('purges a demo session a day after it expires and keeps a merchant session', async () => {
    const demo = (await t.request('POST', '/v1/payment_sessions/demo', { body: { expires_in: '10m' } })).body;
    const m = await merchant(t);
    const own = (
      await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '10m', paymentMethod: ETH_USDC } })
    ).body;
    const book = new SessionAddressBook(t.node.rt.store, 'ethereum', { keepAfterExpiryMs: 24 * 3600_000, now: () => t.node.rt.now() });
    await book.refresh();
    expect(book.get(demo.address)).toBeDefined();
    // past expiry: the demo address is no longer watched, the merchant's still is (late payments)
    offset = 11 * 60_000;
    await book.refresh();
    expect(book.get(demo.address)).toBeUndefined();
    expect(book.get(own.address)).toBeDefined();
    offset = 25 * 3600_000;
    await t.node.rt.store.purgeExpired(t.node.rt.now());
    expect(await t.node.rt.store.get('payment_sessions', demo.session_id)).toBeNull();
    expect(await t.node.rt.store.get('payment_sessions', own.session_id)).not.toBeNull();
  });
});
