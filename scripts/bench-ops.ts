/**
 * `npm run bench:ops`: what operations cost on the hot path and behind it, each against a bare baseline in
 * the same run (SQLite in a temp dir):
 * - store operations with latency metrics (lib/store/instrumented.ts) against the bare adapter;
 * - the HTTP metrics middleware around a handler against the handler alone (in-process, no sockets);
 * - an alert observation (a limit violation: window insert + count + dedup) against one plain insert;
 * - audit sealing (rows linked per second) and chain verification.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../lib/store/index.ts';
import { instrumentStore } from '../lib/store/instrumented.ts';
import { Metrics } from '../lib/runtime/metrics.ts';
import { loadConfig } from '../config/index.ts';
import { AlertEngine } from '../lib/ops/alerts/engine.ts';
import { AUDIT_EVENTS, sealRow, verifyChain } from '../lib/ops/audit-chain.ts';
import { auditOp } from '../lib/core/audit.ts';
import type { Doc } from '../lib/store/port.ts';

const dir = mkdtempSync(join(tmpdir(), 'bench-ops-'));
const store = await openStore(`sqlite:${join(dir, 'bench.db')}`);
const metrics = new Metrics({ defaults: false });
const timed = instrumentStore(store, metrics.storeOpDuration);

async function perOp(n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await f(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  return ((performance.now() - t0) * 1000) / n; // µs per op
}
const fmt = (us: number) => `${us.toFixed(1)} µs`;

// 1. store.get: bare vs instrumented
await store.write(
  Array.from({ length: 1000 }, (_, i) => ({
    op: 'insert' as const,
    coll: 'ops_window_events',
    doc: { id: `k${i}`, counter: 'bench', at: new Date().toISOString(), expires_at: new Date(Date.now() + 3600_000).toISOString() },
  })),
);
const rounds: Array<{ bare: number; inst: number }> = [];
for (let r = 0; r < 3; r++) {
  const bare = await perOp(20_000, (i) => store.get('ops_window_events', `k${i % 1000}`));
  const inst = await perOp(20_000, (i) => timed.get('ops_window_events', `k${i % 1000}`));
  rounds.push({ bare, inst });
}
const best = (k: 'bare' | 'inst') => Math.min(...rounds.map((r) => r[k]));
console.log(
  `store.get            bare ${fmt(best('bare'))}  instrumented ${fmt(best('inst'))}  ratio ${(best('inst') / best('bare')).toFixed(3)}`,
);

// 2. HTTP metrics middleware (the closure and the histogram observe on response close)
{
  const { EventEmitter } = await import('node:events');
  const handler = () => undefined;
  const observe = (
    req: { method: string; $alias: { fullPath: string } },
    res: InstanceType<typeof EventEmitter> & { statusCode: number },
  ) => {
    const t0 = performance.now();
    res.once('close', () => {
      const labels = { method: req.method, route: req.$alias.fullPath, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - t0) / 1000);
    });
    handler();
  };
  const n = 200_000;
  const req = { method: 'GET', $alias: { fullPath: '/v1/payment_sessions/:session_id' } };
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    handler();
    res.emit('close');
  }
  const bare = ((performance.now() - t0) * 1000) / n;
  t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const res = Object.assign(new EventEmitter(), { statusCode: 200 });
    observe(req, res);
    res.emit('close');
  }
  const withMetrics = ((performance.now() - t0) * 1000) / n;
  console.log(`http metrics         bare ${fmt(bare)}  with metrics ${fmt(withMetrics)}  added ${fmt(withMetrics - bare)} per request`);
}

// 3. an alert observation vs one plain insert
{
  const engine = new AlertEngine({ store, config: loadConfig({}).alerts, now: () => new Date() });
  const insert = await perOp(2000, (i) =>
    store.write([
      {
        op: 'insert',
        coll: 'ops_window_events',
        doc: { id: `p${i}`, counter: 'plain', at: new Date().toISOString(), expires_at: new Date().toISOString() },
      },
    ]),
  );
  const observe = await perOp(2000, (i) => engine.observe({ kind: 'limit', merchant_id: `mer_${i % 50}`, source: 's' }, {}));
  console.log(
    `alert observation    one insert ${fmt(insert)}  observe (insert, count, dedup) ${fmt(observe)}  ratio ${(observe / insert).toFixed(2)}`,
  );
}

// 4. audit sealing and verification
{
  const key = Buffer.alloc(32, 7);
  const n = 2000;
  const ops = Array.from({ length: n }, (_, i) => auditOp('bench.event', { merchant_id: `mer_bench${i % 10}`, n: i }, new Date()));
  const t0 = performance.now();
  await store.write(ops);
  const inserted = performance.now() - t0;
  const rows = await store.find<Doc>(AUDIT_EVENTS, { type: 'bench.event' });
  const t1 = performance.now();
  for (const r of rows) await sealRow(store, key, r, new Date());
  const sealMs = performance.now() - t1;
  const t2 = performance.now();
  const report = await verifyChain(store, key, 'mer_bench0');
  const verifyMs = performance.now() - t2;
  console.log(
    `audit                insert ${n} rows ${inserted.toFixed(0)} ms  seal ${(n / (sealMs / 1000)).toFixed(0)} rows/s  verify a ${report.events}-row chain ${verifyMs.toFixed(1)} ms (ok: ${report.ok})`,
  );
}

await store.close();
rmSync(dir, { recursive: true, force: true });
