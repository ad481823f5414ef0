import Stripe from 'stripe';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import { parseSignatureHeader } from '../../lib/webhooks/signature.ts';
import type { DeliveryDoc } from '../../lib/webhooks/delivery.ts';
import { commitEvent, getEvent, sleep, startReceiver, waitFor, waitForEvent, type Receiver } from './webhooks-helpers.ts';

const stripe = new Stripe('sk_test_only_used_offline');
const FAST = { WEBHOOK_SCAN_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_RETRY_BASE_MS: '200' };

describe('webhook delivery (one node, real HTTP receivers)', () => {
  let t: TestNode;
  const receivers: Receiver[] = [];
  const receiver = async (...a: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...a);
    receivers.push(r);
    return r;
  };
  const store = () => t.node.rt.store;
  const nudge = (id: string) => t.node.broker.emit('webhooks.nudge', { event_id: id });
  const audits = (eventId: string) =>
    store().find<{ id: string; type: string; final?: boolean; manual?: boolean; http_status?: number }>(
      'audit_events',
      { event_id: eventId },
      { sort: 'created_at' },
    );

  beforeAll(async () => {
    t = await startTestNode(FAST);
  });
  afterAll(async () => {
    await t.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('POSTs the WebhookEvent with event headers and a signature that our helper and stripe both verify', async () => {
    const rx = await receiver();
    const m = await registerMerchant(t, { webhook_url: rx.url });
    const ev = await commitEvent(store(), m.id);
    nudge(ev.id);
    const [req] = await waitFor('the delivery', () => rx.forEvent(ev.id).length > 0 && rx.forEvent(ev.id));
    const row = await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');

    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-service-event']).toBe('payment_session.completed');
    expect(req.headers['x-service-event-id']).toBe(ev.id);
    // the body is exactly the WebhookEvent, serialized once; the signature covers those bytes
    expect(req.raw).toBe(JSON.stringify(row.body));
    expect(JSON.parse(req.raw)).toEqual({
      event_type: 'payment_session.completed',
      session_id: ev.sessionId,
      status: 'completed',
      amount: 12.5,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      timestamp: row.body.timestamp,
    });
    expect(row.body.timestamp).toMatch(/^\d+$/);
    const header = String(req.headers['x-service-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(req.raw, header, m.webhookSecret)).toBe(true);
    expect(stripe.webhooks.constructEvent(req.raw, header, m.webhookSecret)).toEqual(JSON.parse(req.raw));
    expect(() => verifyWebhook(req.raw.replace('12.5', '1250'), header, m.webhookSecret)).toThrow(/no v1 signature matches/);
    expect(() => stripe.webhooks.constructEvent(req.raw.replace('12.5', '1250'), header, m.webhookSecret)).toThrow(
      Stripe.errors.StripeSignatureVerificationError,
    );

    expect(row.attempts).toHaveLength(1);
    expect(row.attempts[0]).toMatchObject({ status: 200, error: null });
    expect(row.delivered_at).toEqual(expect.any(String));
    expect(rx.forEvent(ev.id)).toHaveLength(1);
    const audit = await audits(ev.id);
    expect(audit.map((a) => a.type)).toEqual(['payment_session.webhook.delivered']);
    // no secret anywhere in the stored row or its audit events
    expect(JSON.stringify([row, audit])).not.toContain(m.webhookSecret);
  });

  it('delivers without a nudge: the scanner finds rows committed to the store', async () => {
    const rx = await receiver();
    const m = await registerMerchant(t, { webhook_url: rx.url });
    const ev = await commitEvent(store(), m.id, { type: 'payment_session.expired' });
    await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');
    expect(rx.forEvent(ev.id)).toHaveLength(1);
    expect(rx.forEvent(ev.id)[0].headers['x-service-event']).toBe('payment_session.expired');
  });

  it('a receiver that fails (500) first and succeeds later: delivered, two attempts in the log', async () => {
    const rx = await receiver((_r, n) => (n === 1 ? 500 : 200));
    const m = await registerMerchant(t, { webhook_url: rx.url });
    const ev = await commitEvent(store(), m.id, { type: 'payment_session.partial_paid' });
    nudge(ev.id);
    const row = await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');
    expect(row.attempts.map((a) => [a.status, a.error])).toEqual([
      [500, 'http_error'],
      [200, null],
    ]);
    expect(row.attempts.every((a) => typeof a.latency_ms === 'number' && a.latency_ms >= 0)).toBe(true);
    expect(rx.forEvent(ev.id)).toHaveLength(2);
    // both requests carry the same event id; each attempt is signed afresh
    expect(rx.forEvent(ev.id).map((r) => r.headers['x-service-event-id'])).toEqual([ev.id, ev.id]);
    for (const r of rx.forEvent(ev.id)) expect(verifyWebhook(r.raw, String(r.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    const audit = await audits(ev.id);
    expect(audit.map((a) => [a.type, a.final])).toEqual([
      ['payment_session.webhook.failed', false],
      ['payment_session.webhook.delivered', undefined],
    ]);

    const log = await t.request('GET', `/v1/payment_sessions/${ev.sessionId}/webhooks`, { key: m.apiKey });
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      session_id: ev.sessionId,
      events: [
        {
          event_id: ev.id,
          event_type: 'payment_session.partial_paid',
          status: 'delivered',
          body: row.body,
          created_at: row.created_at,
          delivered_at: row.delivered_at,
          next_attempt_at: null,
          attempts: [
            { at: expect.any(String), status: 500, latency_ms: expect.any(Number), error: 'http_error' },
            { at: expect.any(String), status: 200, latency_ms: expect.any(Number), error: null },
          ],
        },
      ],
    });
    expect(log.text).not.toContain('nope'); // the receiver's answer body is never kept
  });

  it('a redirect (302 to another local server) is not followed and counts as a failure', async () => {
    const internal = await receiver();
    const rx = await receiver(() => ({ status: 302, headers: { Location: internal.url } }));
    const m = await registerMerchant(t, { webhook_url: rx.url });
    const ev = await commitEvent(store(), m.id);
    nudge(ev.id);
    const row = await waitForEvent(store(), ev.id, (d) => d.attempts.length >= 2);
    expect(row.status).toBe('pending');
    expect(row.attempts.slice(0, 2).map((a) => [a.status, a.error])).toEqual([
      [302, 'redirect'],
      [302, 'redirect'],
    ]);
    expect(internal.received).toHaveLength(0);
    const audit = await audits(ev.id);
    expect(audit[0]).toMatchObject({ type: 'payment_session.webhook.failed', http_status: 302, final: false });
  });

  it('a merchant without webhook_url: the event is skipped (audited), nothing is sent', async () => {
    const m = await registerMerchant(t);
    const ev = await commitEvent(store(), m.id);
    nudge(ev.id);
    const row = await waitForEvent(store(), ev.id, (d) => d.status === 'skipped');
    expect(row.attempts).toEqual([]);
    expect(row.next_attempt_at).toBeNull();
    expect((await audits(ev.id)).map((a) => a.type)).toEqual(['payment_session.webhook.skipped']);
  });

  it('after a webhook-secret rotation, deliveries verify with both the old and the new secret', async () => {
    const rx = await receiver();
    const m = await registerMerchant(t, { webhook_url: rx.url });
    const rot = await t.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey, body: { credential: 'webhook_secret' } });
    expect(rot.status).toBe(200);
    const fresh = rot.body.webhook_secret as string;
    expect(fresh).not.toBe(m.webhookSecret);
    const ev = await commitEvent(store(), m.id);
    nudge(ev.id);
    await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');
    const [req] = rx.forEvent(ev.id);
    const header = String(req.headers['x-service-signature']);
    expect(parseSignatureHeader(header)!.signatures).toHaveLength(2);
    expect(verifyWebhook(req.raw, header, m.webhookSecret)).toBe(true);
    expect(verifyWebhook(req.raw, header, fresh)).toBe(true);
    expect(stripe.webhooks.constructEvent(req.raw, header, m.webhookSecret)).toBeTruthy();
    expect(stripe.webhooks.constructEvent(req.raw, header, fresh)).toBeTruthy();

    // revoking the previous secret ends the overlap: only the new one signs
    const rev = await t.request('POST', '/v1/me/credentials/revoke', { key: m.apiKey, body: { credential: 'webhook_secret' } });
    expect(rev.status).toBe(200);
    const ev2 = await commitEvent(store(), m.id);
    nudge(ev2.id);
    await waitForEvent(store(), ev2.id, (d) => d.status === 'delivered');
    const [req2] = rx.forEvent(ev2.id);
    const header2 = String(req2.headers['x-service-signature']);
    expect(parseSignatureHeader(header2)!.signatures).toHaveLength(1);
    expect(verifyWebhook(req2.raw, header2, fresh)).toBe(true);
    expect(() => verifyWebhook(req2.raw, header2, m.webhookSecret)).toThrow(/no v1 signature matches/);
  });

  describe('POST /v1/payment_sessions/{id}/webhook/retry', () => {
    let rx: Receiver;
    let m: RegisteredMerchant;
    let other: RegisteredMerchant;
    let failing = false;

    beforeAll(async () => {
      rx = await receiver(() => (failing ? 503 : 200));
      m = await registerMerchant(t, { webhook_url: rx.url });
      other = await registerMerchant(t, { webhook_url: rx.url });
    });

    it('redelivers a delivered event now and answers with the delivery log', async () => {
      const ev = await commitEvent(store(), m.id);
      nudge(ev.id);
      await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');
      const res = await t.request('POST', `/v1/payment_sessions/${ev.sessionId}/webhook/retry`, { key: m.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.session_id).toBe(ev.sessionId);
      expect(res.body.events).toHaveLength(1);
      expect(res.body.events[0]).toMatchObject({ event_id: ev.id, event_type: 'payment_session.completed', status: 'delivered' });
      expect(res.body.events[0].attempts).toEqual([
        { at: expect.any(String), status: 200, latency_ms: expect.any(Number), error: null },
        { at: expect.any(String), status: 200, latency_ms: expect.any(Number), error: null, manual: true },
      ]);
      expect(rx.forEvent(ev.id)).toHaveLength(2);
      const audit = await audits(ev.id);
      expect(audit.map((a) => [a.type, a.manual])).toEqual([
        ['payment_session.webhook.delivered', false],
        ['payment_session.webhook.delivered', true],
      ]);
    });

    it('a failed event gets a new attempt; a pending event in back-off is tried now', async () => {
      const sessionId = `ps_retry${Date.now()}`;
      failing = true;
      const a = await commitEvent(store(), m.id, { sessionId, type: 'payment_session.partial_paid' });
      const b = await commitEvent(store(), m.id, { sessionId, type: 'payment_session.completed' });
      nudge(a.id);
      nudge(b.id);
      await waitForEvent(store(), a.id, (d) => d.attempts.length >= 1);
      await waitForEvent(store(), b.id, (d) => d.attempts.length >= 1);
      // a: as if its 72 h were over; b: far in its back-off
      for (const [id, patch] of [
        [a.id, { status: 'failed', next_attempt_at: null }],
        [b.id, { next_attempt_at: '2999-01-01T00:00:00.000Z' }],
      ] as const) {
        await waitFor('a quiet row', async () => {
          const d = (await getEvent(store(), id))!;
          if (d.lease_until && d.lease_until > new Date().toISOString()) return false;
          try {
            await store().write([{ op: 'cas', coll: 'webhook_events', doc: { ...d, ...patch }, expected: d.version! }]);
            return true;
          } catch {
            return false;
          }
        });
      }
      failing = false;
      const before = rx.forEvent(a.id).length + rx.forEvent(b.id).length;
      const res = await t.request('POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, { key: m.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.events.map((e: { event_id: string; status: string }) => [e.event_id, e.status])).toEqual([
        [a.id, 'delivered'],
        [b.id, 'delivered'],
      ]);
      for (const e of res.body.events) expect(e.attempts.at(-1)).toMatchObject({ status: 200, error: null, manual: true });
      expect(rx.forEvent(a.id).length + rx.forEvent(b.id).length).toBe(before + 2);
    });

    it('event_id narrows the redelivery to one event; a failed manual attempt leaves a delivered event delivered', async () => {
      const sessionId = `ps_one${Date.now()}`;
      const a = await commitEvent(store(), m.id, { sessionId, type: 'payment_session.partial_paid' });
      const b = await commitEvent(store(), m.id, { sessionId, type: 'payment_session.completed' });
      nudge(a.id);
      nudge(b.id);
      await waitForEvent(store(), a.id, (d) => d.status === 'delivered');
      await waitForEvent(store(), b.id, (d) => d.status === 'delivered');
      failing = true;
      const res = await t.request('POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, { key: m.apiKey, body: { event_id: b.id } });
      failing = false;
      expect(res.status).toBe(200);
      const [ea, eb] = res.body.events;
      expect(ea.attempts).toHaveLength(1);
      expect(eb).toMatchObject({ status: 'delivered', next_attempt_at: null });
      expect(eb.attempts.at(-1)).toMatchObject({ status: 503, error: 'http_error', manual: true });
      const unknown = await t.request('POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, {
        key: m.apiKey,
        body: { event_id: 'evt_nope' },
      });
      expect(unknown.status).toBe(404);
    });

    it('only the owning merchant: another merchant and unknown sessions are 404, no key is 401, bad bodies 400', async () => {
      const ev = await commitEvent(store(), m.id);
      nudge(ev.id);
      await waitForEvent(store(), ev.id, (d) => d.status === 'delivered');
      const n = rx.forEvent(ev.id).length;
      const foreign = await t.request('POST', `/v1/payment_sessions/${ev.sessionId}/webhook/retry`, { key: other.apiKey });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toMatchObject({ code: 2, message: expect.stringMatching(/not found/) });
      expect((await t.request('GET', `/v1/payment_sessions/${ev.sessionId}/webhooks`, { key: other.apiKey })).status).toBe(404);
      expect((await t.request('POST', '/v1/payment_sessions/ps_unknown/webhook/retry', { key: m.apiKey })).status).toBe(404);
      const anon = await t.request('POST', `/v1/payment_sessions/${ev.sessionId}/webhook/retry`);
      expect(anon.status).toBe(401);
      expect(anon.body).toMatchObject({ code: 7, message: 'missing or invalid authorization header' });
      const bad = await t.request('POST', `/v1/payment_sessions/${ev.sessionId}/webhook/retry`, {
        key: m.apiKey,
        body: { everything: true },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe(3);
      expect(rx.forEvent(ev.id)).toHaveLength(n);
    });
  });
});

describe('webhook delivery: two nodes over one store never deliver a row twice', () => {
  it('claims are exclusive: every event arrives exactly once', async () => {
    const a = await startTestNode({ ...FAST, WEBHOOK_SCAN_INTERVAL_MS: '20' });
    const b = await startTestNode({ ...FAST, WEBHOOK_SCAN_INTERVAL_MS: '20', DATA_DIR: a.dataDir });
    const rx = await startReceiver();
    try {
      const m = await registerMerchant(a, { webhook_url: rx.url });
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const ev = await commitEvent(a.node.rt.store, m.id);
        ids.push(ev.id);
        // both nodes are nudged at once and scan every 20 ms
        a.node.broker.emit('webhooks.nudge', { event_id: ev.id });
        b.node.broker.emit('webhooks.nudge', { event_id: ev.id });
      }
      await Promise.all([a.call('webhooks.scan'), b.call('webhooks.scan'), a.call('webhooks.scan'), b.call('webhooks.scan')]);
      for (const id of ids) await waitForEvent(a.node.rt.store, id, (d) => d.status === 'delivered');
      await sleep(300);
      for (const id of ids) {
        expect(rx.forEvent(id)).toHaveLength(1);
        const row = (await getEvent(b.node.rt.store, id)) as DeliveryDoc;
        expect(row.attempts).toHaveLength(1);
      }
      expect(rx.received).toHaveLength(ids.length);
    } finally {
      await b.stop();
      await a.stop();
      await rx.close();
    }
  });
});
