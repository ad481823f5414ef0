/**
 * Event streams on two nodes over a real NATS server, sharing one SQLite store: an event committed on node
 * A reaches a `GET /v1/events/stream` open on node B by a push (A's commit nudges a sequencer, the pass
 * that stamped it tells every node, B's hub reads it once), not by B's safety-net pass, which is set to an
 * hour here so that it cannot be what delivers. Order and Last-Event-ID resumption hold across the nodes.
 */
import type { TestNode } from '../helpers/node.ts';
import { startTwoNodes } from '../helpers/two-nodes.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { ETH_USDC, eventually, merchant } from '../integration/sessions-helpers.ts';
import { collectStream } from '../helpers/sse.ts';

describe('event streams on two nodes over NATS', () => {
  let stop: () => Promise<void>;
  let a: TestNode;
  let b: TestNode;
  let m: RegisteredMerchant;

  /** a sandbox session created and completed through node `t`: its completion event is committed there */
  async function completeOn(t: TestNode): Promise<string> {
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC },
    });
    expect(s.status).toBe(201);
    expect((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    return s.body.session_id;
  }

  beforeAll(async () => {
    ({ a, b, stop } = await startTwoNodes('events', {
      // the safety net never runs during the test: only the push can deliver
      EVENTS_POLL_INTERVAL_MS: '3600000',
      EVENTS_HEARTBEAT_MS: '500',
      WEBHOOK_RETRY_BASE_MS: '600000',
    }));
    m = await merchant(a);
  });

  afterAll(async () => {
    await stop?.();
  });

  it('an event committed on node A reaches a stream open on node B, in order, each once', async () => {
    const s = collectStream({ baseUrl: b.url, apiKey: m.apiKey });
    try {
      await eventually('connected to B', () => s.connected() > 0);
      // several, since the nudge goes to one node's sequencer (either): both ways are exercised
      const sessions: string[] = [];
      for (let i = 0; i < 6; i++) {
        sessions.push(await completeOn(a));
        await eventually(`event ${i} on B`, () => s.got.some((g) => g.event.session_id === sessions[i]));
      }
      expect(s.got.map((g) => g.event.session_id)).toEqual(sessions);
      expect(s.got.every((g) => g.event.event_type === 'payment_session.completed')).toBe(true);
      const positions = s.got.map((g) => Number(g.position));
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
      expect(new Set(positions).size).toBe(positions.length);
    } finally {
      await s.stop();
    }
  });

  it('a stream on B resumes with Last-Event-ID after events committed on A while it was away', async () => {
    const first = collectStream({ baseUrl: b.url, apiKey: m.apiKey });
    let resumed: ReturnType<typeof collectStream> | null = null;
    try {
      await eventually('connected to B', () => first.connected() > 0);
      const one = await completeOn(a);
      await eventually('one on B', () => first.got.some((g) => g.event.session_id === one));
      await first.stop();
      const away = [await completeOn(a), await completeOn(a)];
      resumed = collectStream({ baseUrl: b.url, apiKey: m.apiKey, lastEventId: first.got[first.got.length - 1].position });
      const after = await completeOn(a);
      await eventually('all on B', () => resumed!.got.some((g) => g.event.session_id === after));
      expect(resumed.got.map((g) => g.event.session_id)).toEqual([...away, after]);
    } finally {
      await first.stop();
      await resumed?.stop();
    }
  });
});
