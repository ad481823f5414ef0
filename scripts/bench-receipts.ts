/**
 * Receipts: PDFs per second and event-loop delay during a burst, rendered in the piscina pool
 * (lib/receipts/pool.ts, what the service does) vs on the main thread (the baseline), in the same run.
 * The event-loop delay is what broker heartbeats and every other request wait while receipts render.
 *
 *   npm run bench:receipts            (RECEIPTS=400 CONCURRENCY=16 to change the burst)
 */
import { renderReceipt } from '../lib/receipts/render.ts';
import { ReceiptWorkers } from '../lib/receipts/pool.ts';
import type { ReceiptData } from '../lib/receipts/model.ts';

const TOTAL = Number(process.env.RECEIPTS ?? 300);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);

function sample(i: number): ReceiptData {
  const tx = (n: number) => `0x${(i * 7 + n).toString(16).padStart(64, '0')}`;
  return {
    merchant_name: 'Bench Shop',
    session_id: `ps_bench${i}`,
    order_reference: `A-${1000 + i}`,
    status: 'completed',
    marks: ['OVERPAID by 0.5 USDC'],
    token: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    expected_amount: '10',
    received_amount: '10.5',
    created_at: '2026-01-01 00:00:00 UTC',
    issued_at: '2026-01-01 00:05:00 UTC',
    issued_iso: '2026-01-01T00:05:00.000Z',
    completed_at: '2026-01-01 00:05:00 UTC',
    deposits: [1, 2, 3].map((n) => ({
      tx_hash: tx(n),
      amount: '3.5',
      detected_at: '2026-01-01 00:04:00 UTC',
      credited_at: '2026-01-01 00:05:00 UTC',
      explorer_url: `https://sepolia.etherscan.io/tx/${tx(n)}`,
      late: false,
      simulated: false,
    })),
    refunds: [],
    refunded_amount: '0',
    qr_url: `https://sepolia.etherscan.io/tx/${tx(3)}`,
    fiat: { quote: 'USD', rate: '0.9999', value: '10.50', source: 'chainlink', as_of: '2026-01-01 00:04:30 UTC', stale: false },
  };
}

async function burst(name: string, render: (d: ReceiptData) => Promise<Buffer>) {
  // warm up (JIT, fonts, worker threads)
  await Promise.all(Array.from({ length: 8 }, (_, i) => render(sample(i))));
  // a 10 ms heartbeat: how late each tick fires is the event-loop delay a broker heartbeat would see
  const lags: number[] = [];
  let expected = performance.now() + 10;
  const beat = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - expected));
    expected = now + 10;
  }, 10);
  let next = 0;
  let bytes = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        const pdf = await render(sample(next++));
        bytes += pdf.length;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(beat);
  lags.sort((a, b) => a - b);
  const pct = (p: number) => (lags.length ? lags[Math.min(lags.length - 1, Math.ceil((p / 100) * lags.length) - 1)] : seconds * 1000);
  const r = {
    name,
    perSecond: TOTAL / seconds,
    p50: pct(50),
    p99: pct(99),
    max: lags.length ? lags[lags.length - 1] : seconds * 1000,
    avgKb: bytes / TOTAL / 1024,
  };
  console.log(
    `${name.padEnd(12)} ${r.perSecond.toFixed(0).padStart(5)} receipts/s  event-loop delay p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms  (${r.avgKb.toFixed(1)} KiB each)`,
  );
  return r;
}

const pool = new ReceiptWorkers();
console.log(`${TOTAL} receipts, ${CONCURRENCY} at a time`);
const main = await burst('main thread', renderReceipt);
const pooled = await burst('pool', (d) => pool.render(d));
await pool.close();
console.log(
  `pool vs main thread: ${(pooled.perSecond / main.perSecond).toFixed(2)}x throughput, event-loop delay p99 ${(main.p99 / pooled.p99).toFixed(1)}x lower, max ${(main.max / pooled.max).toFixed(1)}x lower`,
);
