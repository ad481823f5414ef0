/**
 * Benchmark of the events API and the SDK, each against a bare baseline in the same run, on the embedded
 * default (`node index.ts` as a child process, SQLite):
 *
 * 1. commit → arrival: sandbox sessions simulated over HTTP; the same events are timed at a webhook
 *    receiver (the baseline: the nudged delivery path) and on an SSE stream read with the SDK;
 * 2. stream of rows committed straight into the store with no nudge (found by the per-node safety net);
 * 3. 1,000 open idle streams: the service process's CPU over 30 s with them against the same process
 *    with none (the baseline, measured just before), then sessions simulated one after another with the
 *    1,000 streams open: commit → event on every stream;
 * 4. GET /v1/events pages over 10,000 events (newest first, with a type filter, deep cursor) against
 *    GET /v1/me (the cheapest authenticated request) as the baseline;
 * 5. proof of work, 18 bits: node:crypto on the main thread (baseline), the SDK's worker thread, and the
 *    SDK's in-thread solver for browsers (@noble/hashes).
 *
 * Usage: npx node scripts/bench-events.ts [--events 300] [--streams 1000] [--idle-seconds 30] [--fanout-events 100]
 */
import http from 'node:http';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openStore } from '../lib/store/index.ts';
import { webhookEventOp } from '../lib/webhooks/event.ts';
import type { WriteOp } from '../lib/store/port.ts';
import { arg, benchMerchant, cpuSeconds, percentile, startServiceProcess } from './bench-lib.ts';
import { createPaymentsClient, solvePow, solvePowInWorker, type StreamedEvent } from '../sdk/src/node.ts';

const events = arg('events', 300);
const streamCount = arg('streams', 1000);
const idleSeconds = arg('idle-seconds', 30);
const fanoutEvents = arg('fanout-events', 100);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(1)} ms, p99 ${percentile(s, 99).toFixed(1)} ms`;
};
const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

const hookArrivals = new Map<string, number>();
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['x-service-event-id']);
    if (!hookArrivals.has(id)) hookArrivals.set(id, Date.now());
    res.writeHead(204);
    res.end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const svc = await startServiceProcess({ WEBHOOK_ALLOW_PRIVATE: 'true', TRUSTED_EMAIL_DOMAINS: 'bench.example', POW_DIFFICULTY: '8' });
const store = await openStore(`sqlite:${join(svc.dataDir, 'service.db')}`);
const controller = new AbortController();
try {
  const reg = await benchMerchant(svc, 'bench@bench.example', { webhook_url: hookUrl });
  const client = createPaymentsClient({ baseUrl: svc.url, apiKey: reg.api_key });

  const streamArrivals = new Map<string, number>();
  void (async () => {
    for await (const e of client.events.stream({ signal: controller.signal }) as AsyncGenerator<StreamedEvent>)
      streamArrivals.set(e.event.id, Date.now());
  })().catch(() => undefined);
  await new Promise((r) => setTimeout(r, 500));

  const waitFor = async (map: Map<string, number>, ids: string[]) => {
    const deadline = Date.now() + 120_000;
    while (ids.some((id) => !map.has(id))) {
      if (Date.now() > deadline) throw new Error('events did not arrive in time');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  // 1. sessions simulated one after another
  const ids: string[] = [];
  for (let i = 0; i < events; i++) {
    const s = await client.sessions.create({
      amount: 1,
      expires_in: '1h',
      paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
    });
    await client.sessions.simulate(s.session_id);
    const [row] = await store.find('webhook_events', { session_id: s.session_id });
    ids.push(row.id);
    await new Promise((r) => setTimeout(r, 5));
  }
  await waitFor(hookArrivals, ids);
  await waitFor(streamArrivals, ids);
  const createdAt = new Map<string, number>();
  for (const id of ids) createdAt.set(id, Date.parse(String((await store.get('webhook_events', id))!.created_at)));
  const hookLat = ids.map((id) => hookArrivals.get(id)! - createdAt.get(id)!);
  const sseLat = ids.map((id) => streamArrivals.get(id)! - createdAt.get(id)!);
  console.log(`commit → webhook at the receiver (baseline): ${stats(hookLat)}`);
  console.log(
    `commit → SSE event via the SDK:              ${stats(sseLat)}  (${(p50(sseLat) / Math.max(1, p50(hookLat))).toFixed(2)} × the baseline's p50)`,
  );

  // 2. rows committed with no nudge
  const quiet: string[] = [];
  for (let i = 0; i < 100; i++) {
    const op = webhookEventOp({
      merchant_id: reg.id,
      session_id: `ps_q${i}`,
      event_type: 'payment_session.expired',
      status: 'expired',
      amount: 1,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      now: new Date(),
    }) as WriteOp & { doc: { id: string; created_at: string } };
    await store.write([op]);
    quiet.push(op.doc.id);
    createdAt.set(op.doc.id, Date.parse(op.doc.created_at));
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
  }
  await waitFor(streamArrivals, quiet);
  console.log(
    `commit (no nudge) → SSE event, safety net (EVENTS_POLL_INTERVAL_MS default): ${stats(quiet.map((id) => streamArrivals.get(id)! - createdAt.get(id)!))}`,
  );
  controller.abort();

  // 3. idle streams: CPU of the service process, then fan-out latency
  const pid = svc.child.pid!;
  const cpuOver = async (seconds: number) => {
    const c0 = cpuSeconds(pid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    return ((cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000)) * 100;
  };
  const idleBase = await cpuOver(idleSeconds);
  const fanout = new Map<string, number[]>();
  const open: http.ClientRequest[] = [];
  let connected = 0;
  const { port } = new URL(svc.url);
  for (let i = 0; i < streamCount; i++) {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: '/v1/events/stream',
        agent: false,
        headers: { 'X-API-Key': reg.api_key, Accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) throw new Error(`stream answered ${res.statusCode}`);
        connected++;
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (chunk: string) => {
          buf += chunk;
          let end;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const m = /data: \{"id":"(evt_[0-9a-z]+)"/.exec(buf.slice(0, end));
            buf = buf.slice(end + 2);
            if (!m) continue;
            let list = fanout.get(m[1]);
            if (!list) fanout.set(m[1], (list = []));
            list.push(Date.now());
          }
        });
      },
    );
    req.on('error', () => undefined);
    open.push(req);
  }
  for (const deadline = Date.now() + 60_000; connected < streamCount;) {
    if (Date.now() > deadline) throw new Error(`only ${connected} of ${streamCount} streams connected`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 2000)); // the connections' own setup settles
  const idleStreams = await cpuOver(idleSeconds);
  console.log(
    `${streamCount} open idle streams, service CPU over ${idleSeconds} s: ${idleStreams.toFixed(2)} % of a core against ${idleBase.toFixed(2)} % with none (baseline, same process): ${(idleStreams - idleBase).toFixed(2)} % for the streams`,
  );
  const fanIds: string[] = [];
  for (let i = 0; i < fanoutEvents; i++) {
    const s = await client.sessions.create({
      amount: 1,
      expires_in: '1h',
      paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
    });
    await client.sessions.simulate(s.session_id);
    const [row] = await store.find('webhook_events', { session_id: s.session_id });
    fanIds.push(row.id);
    createdAt.set(row.id, Date.parse(String(row.created_at)));
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const deadline = Date.now() + 120_000; fanIds.some((id) => (fanout.get(id)?.length ?? 0) < streamCount);) {
    if (Date.now() > deadline) throw new Error('events did not reach every stream in time');
    await new Promise((r) => setTimeout(r, 10));
  }
  const every = fanIds.flatMap((id) => fanout.get(id)!.map((t) => t - createdAt.get(id)!));
  const last = fanIds.map((id) => Math.max(...fanout.get(id)!) - createdAt.get(id)!);
  console.log(
    `commit → event, ${fanoutEvents} events × ${streamCount} open streams: every arrival ${stats(every)}; the last stream of each event ${stats(last)}`,
  );
  for (const req of open) req.destroy();

  // 4. listing over 10,000 events
  const bulk: WriteOp[] = [];
  for (let i = 0; i < 10_000; i++) {
    bulk.push(
      webhookEventOp({
        merchant_id: reg.id,
        session_id: `ps_b${i}`,
        event_type: i % 10 === 0 ? 'payment_session.partial_paid' : 'payment_session.completed',
        status: 'x',
        amount: 1,
        currency: 'USDC',
        chain: 'ethereum',
        network: 'testnet',
        now: new Date(),
      }),
    );
    if (bulk.length === 500) await store.write(bulk.splice(0));
  }
  const time = async (n: number, f: () => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await f();
      xs.push(performance.now() - t0);
    }
    return xs;
  };
  const me = await time(200, () => client.me());
  const first = await time(200, () => client.events.list({ limit: 100 }));
  const typed = await time(200, () => client.events.list({ limit: 100, type: 'payment_session.partial_paid' }));
  let cursor: string | undefined;
  const deep = await time(100, async () => {
    const page = await client.events.list({ limit: 100, ...(cursor ? { cursor } : {}) });
    cursor = page.next_cursor ?? undefined;
  });
  const ratio = (xs: number[]) => `${(p50(xs) / p50(me)).toFixed(1)} × GET /v1/me`;
  console.log(`GET /v1/me (baseline):                      ${stats(me)}`);
  console.log(`GET /v1/events limit 100, first page:       ${stats(first)}  (${ratio(first)})`);
  console.log(`GET /v1/events limit 100, type filter (10%): ${stats(typed)}  (${ratio(typed)})`);
  console.log(`GET /v1/events limit 100, pages 1–100:      ${stats(deep)}  (${ratio(deep)})`);
} finally {
  controller.abort();
  await store.close();
  await svc.stop();
  receiver.close();
}

// 5. proof of work, 18 bits, the same challenges for each solver
const bits = (d: Buffer) => {
  let n = 0;
  for (const b of d) {
    if (b === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(b) - 24;
  }
  return n;
};
const challenges = Array.from({ length: 5 }, (_, i) => `bench-${i}-${Date.now()}`);
const timeEach = async (solve: (c: string) => Promise<unknown>) => {
  const t0 = performance.now();
  for (const c of challenges) await solve(c);
  return (performance.now() - t0) / challenges.length;
};
const base = await timeEach(async (c) => {
  for (let i = 0; ; i++)
    if (
      bits(
        createHash('sha256')
          .update(`${c}:${i.toString(36)}`)
          .digest(),
      ) >= 18
    )
      return;
});
const worker = await timeEach((c) => solvePowInWorker(c, 18));
const noble = await timeEach((c) => solvePow(c, 18));
console.log(
  `proof of work 18 bits, mean of ${challenges.length}: lib/onboarding/pow.ts-style createHash loop on the main thread ${base.toFixed(0)} ms (baseline); SDK worker thread ${worker.toFixed(0)} ms (${(worker / base).toFixed(2)} ×, main thread free); SDK in-thread (browsers) ${noble.toFixed(0)} ms (${(noble / base).toFixed(2)} ×)`,
);
