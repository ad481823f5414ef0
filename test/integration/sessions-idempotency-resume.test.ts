/**
 * A node killed between reserving a create's Idempotency-Key and writing the session leaves a reservation
 * whose session never appears (found by test/e2e/cluster-kill.test.ts: the key answered 409 "still in
 * progress" for its whole 24 hours). A young reservation is still a creation in flight (409, retry); an old
 * one is resumed by the retry under the reserved id, so the key still names exactly one session.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { Idempotency, RESUME_RESERVED_AFTER_MS } from '../../lib/core/idempotency.ts';
import { newId } from '../../lib/core/ids.ts';
import { ETH_USDC, merchant } from './sessions-helpers.ts';

describe('a create whose node died after reserving its Idempotency-Key', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t.stop();
  });

  const body = { amount: 5, expires_in: '1h', paymentMethod: ETH_USDC };

  /** What the dead node wrote before it died: the reservation, and nothing else. */
  async function deadReservation(merchantId: string, key: string, ageMs: number): Promise<string> {
    const id = newId('ps');
    const now = new Date(Date.now() - ageMs);
    expect(
      await new Idempotency(t.node.rt.store).reserve({ scope: `sessions.create:${merchantId}`, key, payload: body, now }, id),
    ).toBeNull();
    return id;
  }

  it('answers 409 while the reservation is young, then resumes it under the reserved id', async () => {
    const m = await merchant(t);
    const young = await deadReservation(m.id, 'resume-young', 1_000);
    const first = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers: { 'Idempotency-Key': 'resume-young' } });
    expect(first.status).toBe(409);
    expect(first.body).toMatchObject({ code: 5, message: 'a request with this Idempotency-Key is still in progress; retry it' });
    expect(await t.node.rt.store.get('payment_sessions', young)).toBeNull();

    const old = await deadReservation(m.id, 'resume-old', RESUME_RESERVED_AFTER_MS + 1_000);
    const resumed = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers: { 'Idempotency-Key': 'resume-old' } });
    expect(resumed.status).toBe(201);
    expect(resumed.body.session_id).toBe(old);
    const again = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers: { 'Idempotency-Key': 'resume-old' } });
    expect(again.body.session_id).toBe(old);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);

    // another payload under the old key is still refused
    const other = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { ...body, amount: 6 },
      headers: { 'Idempotency-Key': 'resume-old' },
    });
    expect(other.status).toBe(409);
  });
});
