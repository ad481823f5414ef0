/**
 * Payment sessions on two nodes over a real NATS server, sharing one SQLite store (same DATA_DIR and
 * STORE_URL): sessions created on one node are simulated and credited concurrently on both, including
 * through both nodes' local actor hosts at once (two holders of one actor, as during a rebalance), without
 * losing or doubling a transition; addresses stay unique across nodes; a session whose creating node is
 * gone still expires.
 */
import { plantDeposit } from '../helpers/deposits.ts';
import type { TestNode } from '../helpers/node.ts';
import { startTwoNodes } from '../helpers/two-nodes.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import type { ActorHost } from '../../actors/runtime.ts';
import type { PaymentSessionState, SessionMsg, SessionReply } from '../../lib/sessions/payment-session.ts';
import { ETH_USDC, SOL_USDC, eventually, merchant } from '../integration/sessions-helpers.ts';

type Host = ActorHost<PaymentSessionState, SessionMsg, SessionReply>;

describe('payment sessions on two nodes over NATS', () => {
  let stop: () => Promise<void>;
  let a: TestNode;
  let b: TestNode;
  let m: RegisteredMerchant;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const localHost = (t: TestNode) => (t.node.broker.getLocalService('session-actors') as unknown as { actors: Host }).actors;
  const completedEvents = async (id: string) =>
    a.node.rt.store.count('webhook_events', { session_id: id, event_type: 'payment_session.completed' });

  beforeAll(async () => {
    ({ a, b, stop } = await startTwoNodes('sessions', { SESSION_SCAN_INTERVAL_MS: '50' }, { now }));
    m = await merchant(a);
  });

  afterAll(async () => {
    await stop?.();
  });

  it('shares the seed: both nodes derive from the same key material', async () => {
    const fromA = (
      await a.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC } })
    ).body;
    const stored = await b.node.rt.store.get<PaymentSessionState>('payment_sessions', fromA.session_id);
    const fromB = (
      await b.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC } })
    ).body;
    const storedB = await a.node.rt.store.get<PaymentSessionState>('payment_sessions', fromB.session_id);
    expect(storedB!.key_fingerprint).toBe(stored!.key_fingerprint);
    // and either node answers for any session
    expect((await b.request('GET', `/v1/payment_sessions/${fromA.session_id}`, { key: m.apiKey })).body.address).toBe(fromA.address);
  });

  it('creates on both nodes at once without ever reusing an address', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).request('POST', '/v1/payment_sessions', {
          key: m.apiKey,
          body: { amount: 1, expires_in: '1h', paymentMethod: i % 4 < 2 ? ETH_USDC : SOL_USDC },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(201));
    const all = await a.node.rt.store.find<PaymentSessionState>('payment_sessions', {});
    for (const chain of ['ethereum', 'solana']) {
      const addresses = all.filter((s) => s.chain === chain).map((s) => s.address);
      const indexes = all.filter((s) => s.chain === chain).map((s) => s.address_index);
      expect(new Set(addresses).size).toBe(addresses.length);
      expect(new Set(indexes).size).toBe(indexes.length);
    }
  });

  it('simulate and credits racing on both nodes complete each session exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      ids.push(
        (await a.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 3, expires_in: '1h', paymentMethod: ETH_USDC } }))
          .body.session_id,
      );
    }
    const deposit = (id: string) => ({
      key: `ethereum:testnet:0x${id.slice(-8)}:0`,
      tx_hash: `0x${id.slice(-8)}`,
      index: 0,
      amount_subunits: '3000000',
      token: 'USDC',
      confirmations: 2,
      detected_at: now().toISOString(),
    });
    for (const id of ids) await plantDeposit(a.node.rt.store, id, deposit(id));
    const results = await Promise.all(
      ids.flatMap((id) => [
        a.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: m.apiKey }).then((r) => ({ id, via: 'http-a', status: r.status })),
        b.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: m.apiKey }).then((r) => ({ id, via: 'http-b', status: r.status })),
        a
          .call<SessionReply>('session-actors.send', { id, msg: { type: 'credit', key: deposit(id).key } })
          .then(() => ({ id, via: 'credit-a', status: 200 })),
        b
          .call<SessionReply>('session-actors.send', { id, msg: { type: 'credit', key: deposit(id).key } })
          .then(() => ({ id, via: 'credit-b', status: 200 })),
        // two holders of the same actor at once: both nodes' local hosts, bypassing the shard routing
        localHost(a)
          .send(id, { type: 'simulate', caller_merchant_id: m.id })
          .then((r) => ({ id, via: 'local-a', status: r.refused ? 409 : 200 })),
        localHost(b)
          .send(id, { type: 'simulate', caller_merchant_id: m.id })
          .then((r) => ({ id, via: 'local-b', status: r.refused ? 409 : 200 })),
      ]),
    );
    for (const id of ids) {
      const s = (await b.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body;
      expect(s.status).toBe('completed');
      expect(await completedEvents(id)).toBe(1);
      // the chain deposit is counted once, whoever won; simulation adds only what was missing
      const chainDeposits = s.deposits.filter((d: { simulated: boolean }) => !d.simulated);
      expect(chainDeposits).toHaveLength(1);
      const sum = s.deposits.reduce((acc: bigint, d: { amount_subunits: string }) => acc + BigInt(d.amount_subunits), 0n);
      expect(BigInt(s.received_amount_subunits)).toBe(sum);
      expect(s.deposits.filter((d: { simulated: boolean }) => d.simulated).length).toBeLessThanOrEqual(1);
      // exactly one of the four simulations succeeded, unless the credit completed it first
      const sims = results.filter((r) => r.id === id && !r.via.startsWith('credit'));
      expect(sims.filter((r) => r.status === 200).length).toBe(s.deposits.some((d: { simulated: boolean }) => d.simulated) ? 1 : 0);
      expect(sims.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    }
  });

  it('a session expires on the remaining node after the creating node is gone', async () => {
    const created = await b.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 2, expires_in: '10s', paymentMethod: SOL_USDC },
    });
    expect(created.status).toBe(201);
    const id = created.body.session_id;
    await b.stop();
    offset += 11_000;
    await eventually(
      'node A to expire the session',
      async () => (await a.node.rt.store.get<PaymentSessionState>('payment_sessions', id))?.status === 'expired',
    );
    const events = await a.node.rt.store.find<{ id: string; event_type: string }>('webhook_events', { session_id: id });
    expect(events.map((e) => e.event_type)).toEqual(['payment_session.expired']);
    expect((await a.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body.status).toBe('expired');
  });
});
