/**
 * Pushed event streams (lib/events/hub.ts, lib/events/stream.ts) on a real SQLite store: one read of the
 * feed per node however many streams are open, no read at all while streams are idle, every event once
 * and in order on every stream of its merchant (including one opened while events keep coming, and a slow
 * client whose queue overflowed and who catches up from the store). Over HTTP, a caught-up stream writes
 * its frames straight to the socket as chunks; what Node's own HTTP parser reads of them is checked.
 */
import { rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline, type Readable } from 'node:stream';
import { openStore } from '../../lib/store/index.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import { webhookEventOp, type WebhookEventType } from '../../lib/webhooks/event.ts';
import { lastSeq, readAfter, sequenceAll, sequencePass, typeMatcher, type FeedRow } from '../../lib/events/feed.ts';
import { EventHub } from '../../lib/events/hub.ts';
import { eventStream } from '../../lib/events/stream.ts';
import { tempDir } from '../helpers/node.ts';
import type { Store, WriteOp } from '../../lib/store/port.ts';

const op = (merchant: string, type: WebhookEventType = 'payment_session.completed') =>
  webhookEventOp({
    merchant_id: merchant,
    session_id: 'ps_x',
    event_type: type,
    status: 'completed',
    amount: 1,
    currency: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    now: new Date(),
  }) as WriteOp & { doc: FeedRow };

/** the event ids a stream wrote, as they come */
function collect(s: Readable): string[] {
  const ids: string[] = [];
  let buf = '';
  s.setEncoding('utf8');
  s.on('data', (chunk: string) => {
    buf += chunk;
    let k;
    while ((k = buf.indexOf('\n\n')) >= 0) {
      const data = /^data: (.*)$/m.exec(buf.slice(0, k));
      buf = buf.slice(k + 2);
      if (data) ids.push(JSON.parse(data[1]).id);
    }
  });
  return ids;
}

describe('pushed event streams', () => {
  let dir: string;
  let store: Store;
  let finds: number;
  let hub: EventHub;
  const streams: Readable[] = [];
  beforeEach(async () => {
    dir = tempDir('hub-');
    const inner = await openStore(`sqlite:${join(dir, 's.db')}`);
    await inner.ensure(COLLECTIONS);
    finds = 0;
    store = {
      ...inner,
      kind: inner.kind,
      get: (c, id) => inner.get(c, id),
      find: (c, f, o) => {
        finds++;
        return inner.find(c, f, o);
      },
      write: (ops) => inner.write(ops),
      close: () => inner.close(),
    } as Store;
    hub = new EventHub(store);
    await hub.poke();
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.destroy();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** a stream of the merchant's events from now (of one type, if given), as GET /v1/events/stream opens it */
  const streamOf = async (merchant: string, o: { type?: string; heartbeatMs?: number; maxMs?: number } = {}) =>
    eventStream({
      start: await lastSeq(store),
      read: (after) => readAfter(store, merchant, after, 100, o.type),
      matches: typeMatcher(o.type),
      subscribe: (onRows) => hub.subscribe(merchant, onRows),
      heartbeatMs: o.heartbeatMs ?? 60_000,
      maxMs: o.maxMs ?? 600_000,
    });
  const open = async (merchant: string, type?: string, heartbeatMs = 60_000) => {
    const s = await streamOf(merchant, { type, heartbeatMs });
    streams.push(s);
    return collect(s);
  };
  const commit = async (ops: Array<WriteOp & { doc: FeedRow }>) => {
    await store.write(ops);
    await sequenceAll(store);
    await hub.poke();
    return ops.map((o) => o.doc.id);
  };
  const settle = () => new Promise((r) => setTimeout(r, 30));

  it('one read per event batch for 200 open streams; none while they are idle', async () => {
    const a = await Promise.all(Array.from({ length: 200 }, () => open('mer_a')));
    const b = await open('mer_b');
    await settle();
    const idle = finds;
    await new Promise((r) => setTimeout(r, 300));
    expect(finds).toBe(idle);
    const before = finds;
    const ids = await commit([op('mer_a'), op('mer_b'), op('mer_a')]);
    await settle();
    // the sequencer's own reads, and one read by the hub (plus its empty follow-up is not needed: < a page)
    expect(finds - before).toBeLessThanOrEqual(3);
    for (const got of a) expect(got).toEqual([ids[0], ids[2]]);
    expect(b).toEqual([ids[1]]);
    expect(hub.size).toBe(201);
  });

  it('a stream opened while events keep coming misses none and repeats none; the type filter applies', async () => {
    const all: string[] = [];
    const early = await open('mer_a');
    let late: string[] = [];
    for (let i = 0; i < 20; i++) {
      // opened at the end of the feed while the earlier events may still be on their way to the others
      if (i === 10) late = await open('mer_a');
      all.push(...(await commit([op('mer_a')])));
    }
    const typed = await open('mer_a', 'payment_session.expired');
    const more = await commit([op('mer_a', 'payment_session.expired'), op('mer_a')]);
    await settle();
    expect(early).toEqual([...all, ...more]);
    expect(late).toEqual([...all.slice(10), ...more]);
    expect(typed).toEqual([more[0]]);
  });

  it('a client that does not read falls behind, then catches up from the store: all events, once, in order', async () => {
    const s = await streamOf('mer_a');
    streams.push(s);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(...(await commit(Array.from({ length: 100 }, () => op('mer_a')))));
    // only now does the client read: more than the queue holds was pushed meanwhile
    const got = collect(s);
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual(ids);
  });

  it("the sequencer's own stamped rows reach the streams without a read; rows that skip a seq wait for the read", async () => {
    const a = await open('mer_a');
    const typed = await open('mer_a', 'payment_session.expired');
    const b = await open('mer_b');
    await settle();
    await store.write([op('mer_a'), op('mer_b'), op('mer_a', 'payment_session.expired')]);
    let stamped: FeedRow[] = [];
    await sequenceAll(store, 50, (after, rows) => {
      stamped = rows;
      hub.offer(after, rows);
    });
    const before = finds;
    await settle();
    const ids = stamped.map((r) => r.id);
    expect(ids).toHaveLength(3);
    expect(a).toEqual(ids.filter((_, i) => i !== 1));
    expect(b).toEqual([ids[1]]);
    expect(typed).toEqual([ids[2]]);
    expect(finds).toBe(before);
    // the hub's cursor moved with them: a poke reads nothing new and writes nothing twice
    await hub.poke();
    await settle();
    expect(a).toEqual(ids.filter((_, i) => i !== 1));
    // rows offered out of turn (another node stamped the seq before them) are left to the next read
    await store.write([op('mer_a')]);
    await store.write([op('mer_a')]);
    await sequencePass(store, 1);
    await sequencePass(store, 1, (after, rows) => hub.offer(after, rows));
    await settle();
    expect(a).toHaveLength(2);
    await hub.poke();
    await settle();
    expect(a).toHaveLength(4);
    expect(new Set(a).size).toBe(4);
  });

  describe('over HTTP, piped into the response as moleculer-web does', () => {
    let server: http.Server;
    /** event frames written through a response (res.write): one written straight to the socket is not */
    let framesThroughRes = 0;
    const bodies: Readable[] = [];
    const sockets: Array<import('node:net').Socket> = [];
    beforeEach(async () => {
      framesThroughRes = 0;
      server = http.createServer(async (req, res) => {
        const maxMs = Number(new URL(req.url!, 'http://x').searchParams.get('max') ?? 600_000);
        const body = await streamOf('mer_a', { heartbeatMs: 40, maxMs });
        bodies.push(body);
        const write = res.write.bind(res) as (...a: unknown[]) => boolean;
        res.write = ((...a: unknown[]) => {
          if (String(a[0]).includes('\ndata: ')) framesThroughRes++;
          return write(...a);
        }) as typeof res.write;
        res.setHeader('Content-Type', 'text/event-stream');
        pipeline(body, res, () => undefined);
      });
      server.on('connection', (s) => sockets.push(s));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    afterEach(async () => {
      for (const b of bodies.splice(0)) b.destroy();
      sockets.length = 0;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    /** a client of Node's own parser (chunked framing checked); `paused` reads nothing until resumed */
    const client = (query = '', paused = false) =>
      new Promise<{ ids: string[]; res: http.IncomingMessage; ended: Promise<'end' | 'aborted'> }>((resolve, reject) => {
        const { port } = server.address() as AddressInfo;
        http
          .get({ host: '127.0.0.1', port, path: `/${query}`, agent: false }, (res) => {
            const ids = collect(res);
            if (paused) res.pause();
            // a body cut short (the test's server closing) is an error of the response, not the test's
            const ended = new Promise<'end' | 'aborted'>((r) => {
              res.on('end', () => r('end'));
              res.on('error', () => r('aborted'));
            });
            resolve({ ids, res, ended });
          })
          .on('error', reject);
      });

    it('caught-up streams write events as chunks on the socket, between heartbeats, in order, once each', async () => {
      const readers = await Promise.all([client(), client(), client()]);
      await settle();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        ids.push(...(await commit([op('mer_a'), op('mer_a')])));
        // some events land between heartbeats (40 ms), some right after one
        await new Promise((r) => setTimeout(r, i % 3 === 0 ? 45 : 3));
      }
      await settle();
      for (const r of readers) expect(r.ids).toEqual(ids);
      // the 60 events of each of the three streams went to the socket itself, not through the response (an
      // event landing in the very tick of a heartbeat's write, still corked in the socket, takes the pipe)
      expect(framesThroughRes).toBeLessThanOrEqual(3);
      const more = await commit([op('mer_a')]);
      await settle();
      for (const r of readers) expect(r.ids).toEqual([...ids, ...more]);
    });

    it('a client that stops reading: the socket fills, the pipe takes over; nothing lost or repeated', async () => {
      const slow = await client('', true);
      const quick = await client();
      await settle();
      const ids: string[] = [];
      // 64 KB an event: 640 of them (40 MB) are more than the kernel's socket buffers hold on loopback
      const big = () => {
        const o = op('mer_a');
        (o.doc.body as unknown as Record<string, unknown>).pad = 'x'.repeat(64 * 1024);
        return o;
      };
      for (let i = 0; i < 64; i++) ids.push(...(await commit(Array.from({ length: 10 }, big))));
      await settle();
      expect(quick.ids).toEqual(ids);
      // what the kernel did not take waits in the process: bounded (the pipe's backpressure, then the store),
      // not the 40 MB the stream was handed
      expect(Math.max(...sockets.map((s) => s.writableLength))).toBeLessThan(4 * 1024 * 1024);
      slow.res.resume();
      const deadline = Date.now() + 10_000;
      while (slow.ids.length < ids.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(slow.ids).toEqual(ids);
    });

    it('a stream that ends (maxMs) closes its chunked body cleanly after the events it wrote', async () => {
      const r = await client('?max=300');
      await settle();
      const ids = await commit([op('mer_a'), op('mer_a')]);
      expect(await r.ended).toBe('end');
      expect(r.ids).toEqual(ids);
    });
  });
});
