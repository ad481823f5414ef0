/**
 * Acceptance-review probes of issue 9 through HTTP on a started node: an Idempotency-Key retry that
 * races the request it repeats answers with the payout that request created, even when that payout took
 * the whole balance (a 409 "insufficient available balance" to a retry would tell the client its payout
 * failed, and invite it to pay again under a new key).
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { ETH_USDC, merchant } from './sessions-helpers.ts';

const DEST = '0x52908400098527886E0F7030069857D2E4169EE7';

describe('payout idempotency against the balance (review)', () => {
  let t: TestNode;

  beforeAll(async () => {
    t = await startTestNode({ DAILY_PAYOUT_LIMIT: '1000000' });
  }, 60_000);
  afterAll(async () => {
    await t.stop();
  });

  async function fundedWallet(who: RegisteredMerchant, amount: number) {
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: who.apiKey,
      body: { amount, expires_in: '15m', paymentMethod: ETH_USDC },
    });
    expect(s.status).toBe(201);
    expect((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: who.apiKey })).status).toBe(200);
    return (await t.request('GET', '/v1/wallets', { key: who.apiKey })).body.data[0];
  }

  it('a retry whose balance read comes after its first request took the whole balance gets that payout', async () => {
    const m = await merchant(t);
    const w = await fundedWallet(m, 10);
    const body = { wallet_id: w.id, amount: 10, token: 'USDC', destination: DEST };
    const send = () => t.request('POST', '/v1/payouts', { key: m.apiKey, body, headers: { 'Idempotency-Key': 'slow-read' } });
    // widen the window between the replay check and the balance read, so the retry's read sees the
    // first request's committed payout
    const store = t.node.rt.store;
    const find = store.find.bind(store);
    store.find = (async (coll: string, ...rest: unknown[]) => {
      if (coll === 'ledger_accounts') await new Promise((r) => setTimeout(r, 300));
      return (find as any)(coll, ...rest);
    }) as typeof store.find;
    try {
      const first = send();
      await new Promise((r) => setTimeout(r, 100));
      const retry = await send();
      const done = await first;
      expect([done.status, retry.status, retry.body.message]).toEqual([201, 201, undefined]);
      expect(retry.body.id).toBe(done.body.id);
    } finally {
      store.find = find;
    }
  });

  it('20 concurrent requests with one key for the whole balance: all 201 with the one payout', async () => {
    for (let round = 0; round < 5; round++) {
      const m = await merchant(t);
      const w = await fundedWallet(m, 10);
      const body = { wallet_id: w.id, amount: 10, token: 'USDC', destination: DEST };
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          t.request('POST', '/v1/payouts', { key: m.apiKey, body, headers: { 'Idempotency-Key': `all-of-it-${round}` } }),
        ),
      );
      expect(results.map((r) => [r.status, r.body.message])).toEqual(Array(20).fill([201, undefined]));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      const after = (await t.request('GET', `/v1/wallets/${w.id}`, { key: m.apiKey })).body;
      expect(after.balances.find((b: any) => b.token === 'USDC').available_subunits).toBe('0');
    }
  });
});
