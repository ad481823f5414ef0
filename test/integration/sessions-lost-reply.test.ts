/**
 * A session creation whose actor committed but whose reply was lost (a time-out, a node gone after the
 * write): the session exists, so its daily volume stays reserved and its Idempotency-Key keeps naming it.
 * The same when the failure reaches the creating request before the write commits (the actor's node gone
 * mid-call while the request is taken by its next instance): the key is not freed for a second session.
 * And when no write ever lands, the retry that creates the session under the reserved id later counts its
 * daily volume once.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { SERVICE_FACTORIES } from '../../services/index.ts';
import { createSessionActorsService } from '../../services/session-actors.service.ts';
import { ETH_USDC, merchant } from './sessions-helpers.ts';
import { RESUME_RESERVED_AFTER_MS } from '../../lib/core/idempotency.ts';

describe('session creation whose reply is lost after the commit', () => {
  let t: TestNode;
  let loseNextReply = false;
  let commitAfterFailure = false;
  let failWithoutWrite = false;
  /** added to the node's clock: a key reservation ages past the resume delay without waiting for it */
  let clockOffset = 0;

  beforeAll(async () => {
    t = await startTestNode(
      {
        DAILY_VOLUME_LIMIT: '100',
        SERVICES: Object.keys(SERVICE_FACTORIES)
          .filter((n) => n !== 'session-actors')
          .join(','),
      },
      { now: () => new Date(Date.now() + clockOffset) },
    );
    // the real session actors, whose reply is lost once the state is committed when asked to: their
    // `deliver` (what the send action and a direct local send both run) throws after the host replied
    const svc = t.node.broker.createService(createSessionActorsService(t.node.rt)) as unknown as {
      deliver: (id: string, msg: { type: string }) => Promise<unknown>;
    };
    const deliver = svc.deliver;
    svc.deliver = async (id, msg) => {
      if (failWithoutWrite && msg.type === 'create') {
        failWithoutWrite = false;
        // the actor's node died before the message reached it: nothing is written, ever
        throw new Error('node gone before the call');
      }
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
    await failedCreate(m);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);
    // 60 of the 100 are taken by the session that exists: another 60 is over the cap
    const next = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body });
    expect(next.status).toBe(400);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(1);
  });

  /** a create the failure set up beforehand makes fail: a 5xx, which says nothing of the write */
  async function failedCreate(m: { apiKey: string }, headers: Record<string, string> = {}) {
    const failed = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body, headers });
    expect(failed.status).toBeGreaterThanOrEqual(500);
  }

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
    await failedCreate(m, headers);
    await retryNamesTheOneSession(m, headers);
  });

  it('keeps the key reserved when the failure comes before the write commits, so a retry names that one session', async () => {
    const m = await merchant(t);
    const headers = { 'Idempotency-Key': 'late-commit-1' };
    commitAfterFailure = true;
    await failedCreate(m, headers);
    // the write that outlived its request's failure
    for (let i = 0; i < 100 && (await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })) === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    await retryNamesTheOneSession(m, headers);
    // its volume stays counted: another 60 of the 100 is over the cap
    const next = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body });
    expect(next.status).toBe(400);
  });

  it('a retry that creates the session under the reserved id later counts its daily volume once', async () => {
    const m = await merchant(t);
    const headers = { 'Idempotency-Key': 'never-written-1' };
    failWithoutWrite = true;
    await failedCreate(m, headers);
    expect(await t.node.rt.store.count('payment_sessions', { merchant_id: m.id })).toBe(0);
    // past the resume delay (lib/core/idempotency.ts): the retry creates the session itself; its 60 of the
    // 100 were counted by the first attempt, so counting them again (120) refused it with a 400
    clockOffset += RESUME_RESERVED_AFTER_MS + 1000;
    try {
      await retryNamesTheOneSession(m, headers);
      // 60 counted once: 40 more fit the cap of 100, 1 more does not
      const small = (amount: number) => t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { ...body, amount } });
      expect((await small(40)).status).toBe(201);
      expect((await small(1)).status).toBe(400);
    } finally {
      clockOffset = 0;
    }
  });
});
