/**
 * Webhooks end to end through payment sessions over HTTP: a sandbox merchant's session is simulated to
 * completion, another expires; the receiver verifies each request with our helper and with stripe's
 * verifier; the delivery log and the retry endpoint work on the real session.
 */
import Stripe from 'stripe';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import { startReceiver, waitFor, type Receiver } from '../integration/webhooks-helpers.ts';

const stripe = new Stripe('sk_test_only_used_offline');
const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };

describe('webhooks through payment sessions (HTTP end to end)', () => {
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let expiring: string;

  const forSession = (id: string) => rx.received.filter((r) => JSON.parse(r.raw).session_id === id);

  beforeAll(async () => {
    t = await startTestNode({ WEBHOOK_SCAN_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_MS: '200', SESSION_SCAN_INTERVAL_MS: '200' });
    rx = await startReceiver();
    m = await registerMerchant(t, { webhook_url: rx.url });
    // started first: it expires while the other tests run
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 2, expires_in: '10s', paymentMethod: RAIL },
    });
    expect(res.status).toBe(201);
    expiring = res.body.session_id;
  });
  afterAll(async () => {
    await t.stop();
    await rx.close();
  });

  it('simulate → payment_session.completed, signed, verified by our helper and by stripe', async () => {
    const created = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 12.5, expires_in: '1h', paymentMethod: RAIL, metadata: { order: 'A1' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.session_id as string;
    const sim = await t.request('POST', `/v1/payment_sessions/${id}/simulate`, { key: m.apiKey });
    expect(sim.status).toBe(200);
    expect(sim.body.status).toBe('completed');

    const [req] = await waitFor('the completed webhook', () => forSession(id).length > 0 && forSession(id));
    expect(req.headers['x-service-event']).toBe('payment_session.completed');
    expect(req.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req.raw);
    expect(body).toEqual({
      event_type: 'payment_session.completed',
      session_id: id,
      status: 'completed',
      amount: 12.5,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      timestamp: expect.stringMatching(/^\d+$/),
    });
    const header = String(req.headers['x-service-signature']);
    expect(verifyWebhook(req.raw, header, m.webhookSecret)).toBe(true);
    expect(stripe.webhooks.constructEvent(req.raw, header, m.webhookSecret)).toEqual(body);

    const log = await waitFor('the log to show the delivery', async () => {
      const r = await t.request('GET', `/v1/payment_sessions/${id}/webhooks`, { key: m.apiKey });
      return r.status === 200 && r.body.events[0]?.status === 'delivered' && r.body;
    });
    expect(log.events).toHaveLength(1);
    expect(log.events[0]).toMatchObject({
      event_id: req.headers['x-service-event-id'],
      event_type: 'payment_session.completed',
      status: 'delivered',
    });

    const retry = await t.request('POST', `/v1/payment_sessions/${id}/webhook/retry`, { key: m.apiKey });
    expect(retry.status).toBe(200);
    expect(retry.body.events[0].attempts).toHaveLength(2);
    expect(retry.body.events[0].attempts[1]).toMatchObject({ status: 200, error: null, manual: true });
    const both = forSession(id);
    expect(both).toHaveLength(2);
    expect(both[1].headers['x-service-event-id']).toBe(both[0].headers['x-service-event-id']);
    expect(both[1].raw).toBe(both[0].raw);
    expect(verifyWebhook(both[1].raw, String(both[1].headers['x-service-signature']), m.webhookSecret)).toBe(true);
  });

  it('a session without events has an empty log; another merchant gets 404', async () => {
    const created = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: RAIL },
    });
    const id = created.body.session_id as string;
    const log = await t.request('GET', `/v1/payment_sessions/${id}/webhooks`, { key: m.apiKey });
    expect(log.status).toBe(200);
    expect(log.body).toEqual({ session_id: id, events: [] });
    const other = await registerMerchant(t);
    expect((await t.request('GET', `/v1/payment_sessions/${id}/webhooks`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('POST', `/v1/payment_sessions/${id}/webhook/retry`, { key: other.apiKey })).status).toBe(404);
  });

  it('a short expires_in → payment_session.expired is delivered', async () => {
    const [req] = await waitFor('the expired webhook', () => forSession(expiring).length > 0 && forSession(expiring), 60_000);
    expect(req.headers['x-service-event']).toBe('payment_session.expired');
    expect(JSON.parse(req.raw)).toMatchObject({
      event_type: 'payment_session.expired',
      session_id: expiring,
      status: 'expired',
      amount: 2,
    });
    expect(verifyWebhook(req.raw, String(req.headers['x-service-signature']), m.webhookSecret)).toBe(true);
  });
});
