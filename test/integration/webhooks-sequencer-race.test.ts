/**
 * The webhook engine and the event sequencer do not race on an event's row: a nudged row is claimed once
 * the sequencer has stamped it, so neither write invalidates the other's compare-and-set. Sessions are
 * simulated over HTTP for a merchant with a webhook endpoint and one without; every event is stamped once,
 * reaches the open stream, is delivered once with a valid signature (or skipped), and no write to its row
 * meets a version conflict (before: two per event, the sequencer losing to the claim and to the outcome).
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, ETH_USDC, eventually } from './sessions-helpers.ts';
import { commitEvent, getEvent, startReceiver, type Receiver } from './webhooks-helpers.ts';
import { collectStream } from '../helpers/sse.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import { isConflict, type Store } from '../../lib/store/port.ts';
import type { DeliveryDoc } from '../../lib/webhooks/delivery.ts';
import { SEQUENCE_WAIT_MS } from '../../lib/webhooks/engine.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

// the nudged path of each commit alone: the delivery scanner and the sequencer's safety net are slowed down
// (a scan that claims a row in the few ms before its stamp still costs the sequencer one retry)
const SLOW_SAFETY_NETS = { WEBHOOK_SCAN_INTERVAL_MS: '60000', EVENTS_POLL_INTERVAL_MS: '60000' };

describe('webhook delivery and the event sequencer on one row', () => {
  let t: TestNode;
  let rx: Receiver;
  /** ids of webhook_events rows whose write met a version conflict, once per conflict */
  const conflicts: string[] = [];

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestNode(SLOW_SAFETY_NETS);
    // the services hold this store object: every write of the sequencer and the engine goes through here
    const store: Store = t.node.rt.store;
    const write = store.write.bind(store);
    store.write = async (ops) => {
      try {
        await write(ops);
      } catch (e) {
        if (isConflict(e) && e.coll === 'webhook_events') conflicts.push(e.id);
        throw e;
      }
    };
  });
  afterAll(async () => {
    await t.stop();
    await rx.close();
  });

  async function simulateEvents(m: RegisteredMerchant, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const s = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC },
      });
      expect(s.status).toBe(201);
      expect((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
      const [row] = await t.node.rt.store.find<DeliveryDoc>('webhook_events', { session_id: s.body.session_id });
      ids.push(row.id);
    }
    return ids;
  }

  it.each([
    ['with a webhook endpoint', true],
    ['without a webhook endpoint', false],
  ])('%s: every event is stamped once, streamed, delivered or skipped, with no conflict on its row', async (_label, withEndpoint) => {
    const m = await merchant(t, withEndpoint ? { webhook_url: rx.url } : {});
    const stream = collectStream({ baseUrl: t.url, apiKey: m.apiKey });
    try {
      await eventually('connected', () => stream.connected() > 0);
      const ids = await simulateEvents(m, 12);
      await eventually('every event on the stream', () => stream.got.length >= ids.length);
      // in commit order, each once
      expect(stream.got.map((e) => e.event.id)).toEqual(ids);
      const rows = await eventually('every event settled', async () => {
        const all = (await Promise.all(ids.map((id) => getEvent(t.node.rt.store, id)))) as Array<DeliveryDoc & { stream_seq?: number }>;
        return all.every((r) => r.status !== 'pending' && r.lease_until == null) && all;
      });
      const seqs = rows.map((r) => r.stream_seq!);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(ids.length);
      for (const row of rows) {
        expect(row.status).toBe(withEndpoint ? 'delivered' : 'skipped');
        if (!withEndpoint) continue;
        const [req, ...again] = rx.forEvent(row.id);
        expect(again).toHaveLength(0);
        expect(() => verifyWebhook(req.raw, String(req.headers['x-service-signature']), m.webhookSecret)).not.toThrow();
      }
      expect(conflicts.filter((id) => ids.includes(id))).toEqual([]);
    } finally {
      await stream.stop();
    }
  });

  it('a nudged row the sequencer never stamps (its nudge or word lost) is still delivered, after the wait', async () => {
    const m = await merchant(t, { webhook_url: rx.url });
    const ev = await commitEvent(t.node.rt.store, m.id);
    const t0 = Date.now();
    // the webhook engine alone hears the nudge; the sequencer's safety net is a minute away
    await t.node.broker.emit('webhooks.nudge', { event_id: ev.id }, { groups: ['webhooks'] });
    const row = await eventually('delivered', async () => {
      const r = (await getEvent(t.node.rt.store, ev.id)) as DeliveryDoc & { stream_seq?: number | null };
      return r.status === 'delivered' && r;
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SEQUENCE_WAIT_MS - 50);
    expect(row.stream_seq ?? null).toBeNull();
    expect(rx.forEvent(ev.id)).toHaveLength(1);
    expect(() =>
      verifyWebhook(rx.forEvent(ev.id)[0].raw, String(rx.forEvent(ev.id)[0].headers['x-service-signature']), m.webhookSecret),
    ).not.toThrow();
  });
});
