/**
 * The merchant events API over HTTP against started nodes: GET /v1/events (paging, filters, the exact
 * delivered body) and GET /v1/events/stream (Server-Sent Events: order, out-of-order commits, resume
 * with Last-Event-ID after a reconnect, after a node restart, and events committed on another node).
 */
import { rmSync } from 'node:fs';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, ETH_USDC, eventually } from './sessions-helpers.ts';
import { commitEvent, startReceiver } from './webhooks-helpers.ts';
import { webhookEventOp } from '../../lib/webhooks/event.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { collectStream } from '../helpers/sse.ts';
import { streamEvents } from '../../sdk/src/sse.ts';
import { PaymentsError } from '../../sdk/src/errors.ts';

const FAST = { EVENTS_POLL_INTERVAL_MS: '50', EVENTS_HEARTBEAT_MS: '500', WEBHOOK_RETRY_BASE_MS: '600000' };

describe('GET /v1/events', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;
  const ids: string[] = [];
  const base = Date.parse('2026-01-01T00:00:00Z');

  beforeAll(async () => {
    t = await startTestNode(FAST);
    m = await merchant(t);
    other = await merchant(t);
    for (let i = 0; i < 45; i++) {
      const type = i % 3 === 0 ? 'payment_session.expired' : i % 3 === 1 ? 'payment_session.partial_paid' : 'payment_session.completed';
      ids.push((await commitEvent(t.node.rt.store, m.id, { type, now: new Date(base + i * 60_000) })).id);
    }
    await commitEvent(t.node.rt.store, other.id);
  });
  afterAll(() => t.stop());

  it("pages newest first with a cursor, only the caller's events, each page bounded by limit", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/v1/events?limit=20${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await t.request('GET', q, { key: m.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(20);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const first = await t.request('GET', '/v1/events', { key: m.apiKey });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.data[0]).toEqual({
      id: ids[44],
      created_at: new Date(base + 44 * 60_000).toISOString(),
      event_type: 'payment_session.completed',
      session_id: expect.any(String),
      status: 'completed',
      amount: 12.5,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      timestamp: expect.stringMatching(/^\d+$/),
    });
    const theirs = await t.request('GET', '/v1/events', { key: other.apiKey });
    expect(theirs.body.data).toHaveLength(1);
    expect(ids).not.toContain(theirs.body.data[0].id);
  });

  it('filters by type (one or several) and created_after', async () => {
    const expired = await t.request('GET', '/v1/events?type=payment_session.expired&limit=100', { key: m.apiKey });
    expect(expired.body.data).toHaveLength(15);
    expect(expired.body.data.every((e: { event_type: string }) => e.event_type === 'payment_session.expired')).toBe(true);
    const two = await t.request('GET', '/v1/events?type=payment_session.expired,payment_session.completed&limit=100', { key: m.apiKey });
    expect(two.body.data).toHaveLength(30);
    const after = new Date(base + 39 * 60_000).toISOString();
    const recent = await t.request('GET', `/v1/events?created_after=${encodeURIComponent(after)}`, { key: m.apiKey });
    expect(recent.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(40).reverse());
    const both = await t.request('GET', `/v1/events?created_after=${encodeURIComponent(after)}&type=payment_session.completed`, {
      key: m.apiKey,
    });
    expect(both.body.data.map((e: { id: string }) => e.id)).toEqual([ids[44], ids[41]]);
  });

  it("GET /v1/events/{event_id}: the caller's event; anyone else's is a 404 like an unknown one", async () => {
    const one = await t.request('GET', `/v1/events/${ids[2]}`, { key: m.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: ids[2], event_type: 'payment_session.completed' });
    expect((await t.request('GET', `/v1/events/${ids[2]}`, { key: other.apiKey })).status).toBe(404);
    expect((await t.request('GET', '/v1/events/evt_nope', { key: m.apiKey })).body.code).toBe(2);
  });

  it("GET /v1/payment_sessions pages the caller's sessions newest first and refuses bad input", async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount: 1 + i, expires_in: '1h', paymentMethod: ETH_USDC },
      });
      made.push(s.body.session_id);
    }
    const p1 = await t.request('GET', '/v1/payment_sessions?limit=2', { key: m.apiKey });
    expect(p1.body.data.map((s: { session_id: string }) => s.session_id)).toEqual([made[2], made[1]]);
    const p2 = await t.request('GET', `/v1/payment_sessions?limit=2&cursor=${p1.body.next_cursor}`, { key: m.apiKey });
    expect(p2.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(p2.body.data.map((s: { session_id: string }) => s.session_id)).toEqual([made[0]]);
    expect((await t.request('GET', '/v1/payment_sessions?status=completed', { key: m.apiKey })).body.data).toEqual([]);
    expect((await t.request('GET', '/v1/payment_sessions', { key: other.apiKey })).body.data).toEqual([]);
    for (const q of ['status=paid', 'limit=0', 'cursor=x', 'foo=1'])
      expect((await t.request('GET', `/v1/payment_sessions?${q}`, { key: m.apiKey })).status).toBe(400);
    expect((await t.request('GET', '/v1/payment_sessions')).status).toBe(401);
  });

  it('refuses bad input with a 400 envelope and needs a key', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'cursor=nope', 'type=DROP%20TABLE', 'created_after=yesterday', 'foo=1']) {
      const res = await t.request('GET', `/v1/events?${q}`, { key: m.apiKey });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 3, message: expect.any(String) });
    }
    const anon = await t.request('GET', '/v1/events');
    expect(anon.status).toBe(401);
    expect(anon.body.code).toBe(7);
    const badStream = await t.request('GET', '/v1/events/stream?type=nope', { key: m.apiKey });
    expect(badStream.status).toBe(400);
    const foreign = await t.request('GET', '/v1/events/stream', {
      key: m.apiKey,
      headers: { 'Last-Event-ID': (await t.request('GET', '/v1/events', { key: other.apiKey })).body.data[0].id },
    });
    expect(foreign.status).toBe(400);
  });
});

describe('events of a real session: the exact delivered body', () => {
  it('an event minus id and created_at is byte for byte the body that was signed and delivered', async () => {
    const receiver = await startReceiver();
    const t = await startTestNode(FAST);
    try {
      const m = await merchant(t, { webhook_url: receiver.url });
      const s = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount: 3.25, expires_in: '1h', paymentMethod: ETH_USDC },
      });
      expect(s.status).toBe(201);
      expect((await t.request('POST', `/v1/payment_sessions/${s.body.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
      const delivered = await eventually('the webhook', () => receiver.received[0]);
      const list = await t.request('GET', '/v1/events', { key: m.apiKey });
      expect(list.body.data).toHaveLength(1);
      const { id, created_at: _c, ...body } = list.body.data[0];
      expect(id).toBe(delivered.eventId);
      expect(JSON.stringify(body)).toBe(delivered.raw);
    } finally {
      await t.stop();
      await receiver.close();
    }
  });
});

describe('GET /v1/events/stream', () => {
  it('streams new events in commit order, including one whose id is older than events committed before it', async () => {
    const t = await startTestNode(FAST);
    const m = await merchant(t);
    const before = await commitEvent(t.node.rt.store, m.id);
    await t.call('events.sequence');
    const s = collectStream({ baseUrl: t.url, apiKey: m.apiKey });
    try {
      await eventually('connected', () => s.connected() > 0);
      // an id chosen before the others but committed after them (a slow writer on another node)
      const late = webhookEventOp({
        merchant_id: m.id,
        session_id: 'ps_late',
        event_type: 'payment_session.expired',
        status: 'expired',
        amount: 1,
        currency: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
        now: new Date(),
      });
      const a = await commitEvent(t.node.rt.store, m.id);
      await eventually('a streamed', () => s.got.some((g) => g.event.id === a.id));
      await t.node.rt.store.write([late]);
      const b = await commitEvent(t.node.rt.store, m.id, { type: 'payment_session.partial_paid' });
      await eventually('all streamed', () => s.got.length >= 3 && s.got);
      expect(s.got.map((g) => g.event.id)).toEqual([a.id, (late as { doc: { id: string } }).doc.id, b.id]);
      expect(s.got.map((g) => g.event.id)).not.toContain(before.id);
      expect(s.got[2].event).toMatchObject({ event_type: 'payment_session.partial_paid', status: 'partial_paid', id: b.id });
      // positions increase
      const positions = s.got.map((g) => Number(g.position));
      expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    } finally {
      await s.stop();
      await t.stop();
    }
  });

  it('resumes after a reconnect with Last-Event-ID: nothing missed, nothing twice; type filter applies', async () => {
    const t = await startTestNode(FAST);
    const m = await merchant(t);
    try {
      let s = collectStream({ baseUrl: t.url, apiKey: m.apiKey });
      await eventually('connected', () => s.connected() > 0);
      const first = [await commitEvent(t.node.rt.store, m.id), await commitEvent(t.node.rt.store, m.id)];
      await eventually('first two', () => s.got.length === 2);
      await s.stop();
      const last = s.got[1].position;
      const whileAway = [
        await commitEvent(t.node.rt.store, m.id),
        await commitEvent(t.node.rt.store, m.id, { type: 'payment_session.expired' }),
      ];
      s = collectStream({ baseUrl: t.url, apiKey: m.apiKey, lastEventId: last });
      await eventually('connected again', () => s.connected() > 0);
      const after = await commitEvent(t.node.rt.store, m.id);
      await eventually('the rest', () => s.got.length === 3);
      expect(s.got.map((g) => g.event.id)).toEqual([...whileAway.map((e) => e.id), after.id]);
      expect(s.got.map((g) => g.event.id)).not.toContain(first[0].id);
      await s.stop();
      // resuming from an evt_ id (from the list) works too, and so does a type filter
      const typed = collectStream({ baseUrl: t.url, apiKey: m.apiKey, lastEventId: first[1].id, type: 'payment_session.expired' });
      await eventually('the expired one', () => typed.got.length === 1);
      expect(typed.got[0].event.id).toBe(whileAway[1].id);
      await typed.stop();
      // raw SSE framing
      const res = await fetch(`${t.url}/v1/events/stream`, { headers: { 'X-API-Key': m.apiKey, 'Last-Event-ID': s.got[0].position } });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(`\n\n`, text.indexOf('data:'))) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect(text).toMatch(/^retry: \d+\n/);
      expect(text).toMatch(new RegExp(`id: \\d+\\nevent: payment_session.expired\\ndata: \\{"id":"${whileAway[1].id}"`));
    } finally {
      await t.stop();
    }
  });

  it('resumes after the node restarts, and streams events committed on another node of the same store', async () => {
    const a = await startTestNode(FAST, { keepData: true });
    const m = await merchant(a);
    const s = collectStream({ baseUrl: a.url, apiKey: m.apiKey });
    let b: TestNode | null = null;
    let c: TestNode | null = null;
    try {
      await eventually('connected', () => s.connected() > 0);
      const one = await commitEvent(a.node.rt.store, m.id);
      await eventually('one', () => s.got.length === 1);
      // committed, then the node goes away before (or while) it is streamed
      const two = await commitEvent(a.node.rt.store, m.id);
      await a.stop();
      b = await startTestNode({ ...FAST, DATA_DIR: a.dataDir });
      const three = await commitEvent(b.node.rt.store, m.id);
      // the client keeps reconnecting to the address it knows; point a fresh reader at the new node from the last position
      await s.stop();
      const resumed = collectStream({ baseUrl: b.url, apiKey: m.apiKey, lastEventId: s.got[s.got.length - 1].position });
      try {
        await eventually('two and three', () => resumed.got.some((g) => g.event.id === three.id));
        const all = [...s.got, ...resumed.got].map((g) => g.event.id);
        expect(all).toEqual([one.id, two.id, three.id]);
        // a second node on the same store: what it commits reaches the stream served by b
        c = await startTestNode({ ...FAST, DATA_DIR: a.dataDir });
        const session = await c.request('POST', '/v1/payment_sessions', {
          key: m.apiKey,
          body: { amount: 1, expires_in: '1h', paymentMethod: ETH_USDC },
        });
        expect(session.status).toBe(201);
        expect((await c.request('POST', `/v1/payment_sessions/${session.body.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
        const got = await eventually('the simulated completion', () =>
          resumed.got.find((g) => g.event.session_id === session.body.session_id),
        );
        expect(got.event).toMatchObject({ event_type: 'payment_session.completed', status: 'completed', amount: 1 });
      } finally {
        await resumed.stop();
      }
    } finally {
      await s.stop();
      await c?.stop();
      await b?.stop();
      rmSync(a.dataDir, { recursive: true, force: true });
    }
  });

  it('a reader that leaves is no warning: closed streams log no error with a stack trace', async () => {
    const t = await startTestNode(FAST);
    const lines: string[] = [];
    const spies = (['log', 'info', 'warn', 'error'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' '))),
    );
    try {
      const m = await merchant(t);
      const streams = [0, 1, 2].map(() => collectStream({ baseUrl: t.url, apiKey: m.apiKey }));
      await eventually('connected', () => streams.every((s) => s.connected() > 0));
      const e = await commitEvent(t.node.rt.store, m.id);
      await eventually('streamed', () => streams.every((s) => s.got.some((g) => g.event.id === e.id)));
      for (const s of streams) await s.stop();
      // the service notices each close on its next write (the heartbeat, every 500 ms here)
      await new Promise((r) => setTimeout(r, 1500));
      await t.request('GET', '/v1/me', { key: m.apiKey });
      expect(lines.filter((l) => /Stream got an error|ERR_STREAM_PREMATURE_CLOSE/.test(l))).toEqual([]);
    } finally {
      spies.forEach((s) => s.mockRestore());
      await t.stop();
    }
  });

  it('refuses a stream without credentials as a typed error', async () => {
    const t = await startTestNode(FAST);
    try {
      const it = streamEvents({ baseUrl: t.url, apiKey: 'service_sk_test_nope' });
      await expect(it.next()).rejects.toMatchObject({ status: 401, code: 7 });
      await expect(streamEvents({ baseUrl: t.url, apiKey: 'x' }).next()).rejects.toBeInstanceOf(PaymentsError);
    } finally {
      await t.stop();
    }
  });
});
