/**
 * A session creation whose actor committed but whose reply was lost (a time-out, a node gone after the
 * write): the session exists, so its daily volume stays reserved and its Idempotency-Key keeps naming it.
 * The same when the failure reaches the creating request before the write commits (the actor's node gone
 * mid-call while the request is taken by its next instance): the key is not freed for a second session.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { SERVICE_FACTORIES } from '../../services/index.ts';
import { createSessionActorsService } from '../../services/session-actors.service.ts';
import { ETH_USDC, merchant } from './sessions-helpers.ts';

describe('session creation whose reply is lost after the commit', () => {
  let t: TestNode;
  let loseNextReply = false;
  let commitAfterFailure = false;

  beforeAll(async () => {
    t = await startTestNode({
      DAILY_VOLUME_LIMIT: '100',
      SERVICES: Object.keys(SERVICE_FACTORIES)
        .filter((n) => n !== 'session-actors')
        .join(','),
    });
    // the real session actors, whose reply is lost once the state is committed when asked to: their
    // `deliver` (what the send action and a direct local send both run) throws after the host replied
    const svc = t.node.broker.createService(createSessionActorsService(t.node.rt)) as unknown as {
      deliver: (id: string, msg: { type: string }) => Promise<unknown>;
    };
    const deliver = svc.deliver;
    svc.deliver = async (id, msg) => {
      if (commitAfterFailure && msg.type === 'create') {
        commitAfterFailure = false;
        // the caller hears of a failure that says nothing of the write, and the write lands after it
        setTimeout(() => void deliver(id, msg).catch(() => undefined), 100);
        throw new Error('node gone mid-call');
      }
      const reply = await deliver(id, msg);
      if (loseNextReply && msg.type === 'create') {
        loseNextReply = false;
        throw new Error('reply lost');
      }
      return reply;
    };
    await t.node.broker.waitForServices(['session-actors']);
  });
  afterAll(async () => {
    await t.stop();
  });

  const body = { amount: 60, expires_in: '15m', paymentMethod: ETH_USDC };

  it('keeps the daily volume of the session it created', async () => {
    const m = await merchant(t);
    loseNextReply = true;
    const lost = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);
    // 60 of the 100 are taken by the session that exists: another 60 is over the cap
    const next = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body });
    expect(next.status).toBe(400);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);
  });

  /** the retry with the same key answers 201, and the one session stored for the merchant is the one it names */
  async function retryNamesTheOneSession(m: { id: string; apiKey: string }, headers: Record<string, string>) {
    const retried = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers });
    expect(retried.status).toBe(201);
    const stored = await t.node.rt.store.find<{ id: string }>('payment_sessions', { merchant_id: m.id });
    expect(stored.map((s) => s.id)).toEqual([retried.body.session_id]);
  }

  it('answers the retry with the same Idempotency-Key with the session already created', async () => {
    const m = await merchant(t);
    const headers = { 'Idempotency-Key': 'lost-reply-1' };
    loseNextReply = true;
    const lost = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers });
    expect(lost.status).toBeGreaterThanOrEqual(500);
    await retryNamesTheOneSession(m, headers);
  });

  it('keeps the key reserved when the failure comes before the write commits, so a retry names that one session', async () => {
    const m = await merchant(t);
    const headers = { 'Idempotency-Key': 'late-commit-1' };
    commitAfterFailure = true;
    const failed = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // the write that outlived its request's failure
    for (let i = 0; i < 100 && (await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })) === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    await retryNamesTheOneSession(m, headers);
    // its volume stays counted: another 60 of the 100 is over the cap
    const next = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body });
    expect(next.status).toBe(400);
  });
});
