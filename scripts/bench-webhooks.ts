/**
 * Benchmark: webhook delivery latency, from the commit of the outbox row to the arrival of the signed
 * POST at a local receiver, on the embedded default (`node index.ts` as a child process, SQLite).
 *
 * 1. nudged: sandbox sessions simulated to completion over HTTP; the session actor commits the row and
 *    emits webhooks.nudge, so delivery starts at once (the normal path);
 * 2. scanner only: rows committed straight into the store with no nudge (what a node restarting after a
 *    crash finds), picked up by the scanner every WEBHOOK_SCAN_INTERVAL_MS (default 1000 ms).
 *
 * Latency = arrival time at the receiver − the row's created_at (both wall clock, same host, ms).
 * Usage: npx node scripts/bench-webhooks.ts [--events 500] [--concurrency 10]
 */
import http from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openStore } from '../lib/store/index.ts';
import { webhookEventOp } from '../lib/webhooks/event.ts';
import { verifyWebhook } from '../lib/webhooks/verify.ts';
import type { DeliveryDoc } from '../lib/webhooks/delivery.ts';
import { arg, benchMerchant, percentile, startServiceProcess } from './bench-lib.ts';

const events = arg('events', 500);
const concurrency = arg('concurrency', 10);

// the receiver: arrival time per event id; every request is verified
const arrivals = new Map<string, number>();
let secret = '';
let badSignatures = 0;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const raw = Buffer.concat(chunks);
    try {
      verifyWebhook(raw, req.headers['x-service-signature'], secret);
    } catch {
      badSignatures++;
    }
    const id = String(req.headers['x-service-event-id']);
    if (!arrivals.has(id)) arrivals.set(id, at);
    res.writeHead(200);
    res.end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const svc = await startServiceProcess({ WEBHOOK_ALLOW_PRIVATE: 'true', TRUSTED_EMAIL_DOMAINS: 'bench.example', POW_DIFFICULTY: '8' });
const store = await openStore(`sqlite:${join(svc.dataDir, 'service.db')}`);

async function waitAll(ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (ids.some((id) => !arrivals.has(id))) {
    if (Date.now() > deadline) throw new Error(`${ids.filter((id) => !arrivals.has(id)).length} events not delivered in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function report(label: string, ids: string[]): Promise<void> {
  const latencies: number[] = [];
  for (const id of ids) {
    const row = await store.get<DeliveryDoc>('webhook_events', id);
    latencies.push(arrivals.get(id)! - Date.parse(row!.created_at));
  }
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((s, x) => s + x, 0) / latencies.length;
  console.log(
    `${label}: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, mean ${mean.toFixed(1)} ms, max ${latencies.at(-1)} ms (${ids.length} events)`,
  );
}

try {
  const reg = await benchMerchant(svc, 'bench@bench.example', { webhook_url: hookUrl });
  secret = reg.webhook_secret;
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
  const paymentMethod = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };

  async function simulatedSession(): Promise<string> {
    const created = await (
      await fetch(`${svc.url}/v1/payment_sessions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ amount: 1, expires_in: '1h', paymentMethod }),
      })
    ).json();
    // concurrent completions credit the one merchant wallet with commutative adds: every simulate is a 200
    const sim = await fetch(`${svc.url}/v1/payment_sessions/${created.session_id}/simulate`, {
      method: 'POST',
      headers: { 'X-API-Key': reg.api_key },
    });
    if (sim.status !== 200) throw new Error(`simulate ${created.session_id}: ${sim.status} ${await sim.text()}`);
    // the completion's event row may be written in the write after the simulate's answer: wait for it
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 5))) {
      const [ev] = await store.find<DeliveryDoc>('webhook_events', { session_id: created.session_id });
      if (ev) return ev.id;
    }
    throw new Error(`no webhook event for ${created.session_id} within 10 s`);
  }

  // warm-up
  const warm: string[] = [];
  for (let i = 0; i < 20; i++) warm.push(await simulatedSession());
  await waitAll(warm, 30_000);

  // 1. nudged path, `concurrency` clients completing sessions
  const nudged: string[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < events) {
        next++;
        nudged.push(await simulatedSession());
      }
    }),
  );
  await waitAll(nudged, 120_000);
  const seconds = (performance.now() - t0) / 1000;
  await report(`nudged (session simulate → receiver, ${concurrency} concurrent clients)`, nudged);
  console.log(`  ${(events / seconds).toFixed(0)} sessions completed and delivered per second (2 API calls each)`);

  // 2. scanner only: rows committed directly, no nudge
  const scanned: string[] = [];
  const batch = Math.min(events, 200);
  for (let i = 0; i < batch; i++) {
    const op = webhookEventOp({
      merchant_id: reg.id,
      session_id: `ps_bench${i}`,
      event_type: 'payment_session.completed',
      status: 'completed',
      amount: 1,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      now: new Date(),
    });
    await store.write([op]);
    scanned.push((op as { doc: { id: string } }).doc.id);
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 10)); // spread over scan periods
  }
  await waitAll(scanned, 60_000);
  await report('scanner only (no nudge, WEBHOOK_SCAN_INTERVAL_MS=1000)', scanned);
  console.log(`signatures that failed verification at the receiver: ${badSignatures}`);
} finally {
  await store.close();
  await svc.stop();
  receiver.close();
}
