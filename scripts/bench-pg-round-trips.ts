/**
 * Benchmark: round trips to PostgreSQL per session create, counted at the driver (every query a pg
 * client sends, grouped by statement), for 20 creates with an Idempotency-Key on one in-process node on a
 * fresh database, after 5 unmeasured ones. Background scanners' queries of those seconds are included.
 *
 * Usage: npx node scripts/bench-pg-round-trips.ts [--creates 20]
 */
import pg from 'pg';
import { startTestNode, tempDir } from '../test/helpers/node.ts';
import { registerMerchant } from '../test/helpers/merchant.ts';
import { freshDatabase } from '../test/helpers/postgres.ts';

const i = process.argv.indexOf('--creates');
const N = i > 0 ? Number(process.argv[i + 1]) : 20;
const RAIL = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };

const db = await freshDatabase('bench_round_trips');
const node = await startTestNode({ DATA_DIR: tempDir(), STORE_URL: db.url, RATE_LIMIT_PER_MINUTE: '100000', LOG_LEVEL: 'warn' });
const m = await registerMerchant(node);
const counts = new Map<string, number>();
let counting = false;
const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
// the one place every statement passes (pool queries and transactions alike)
(pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown }).query = function (this: pg.Client, ...a: unknown[]) {
  if (counting) {
    const text = typeof a[0] === 'string' ? a[0] : (a[0] as { text: string }).text;
    counts.set(text.slice(0, 110), (counts.get(text.slice(0, 110)) ?? 0) + 1);
  }
  return query.apply(this, a);
};
const create = async (key: string) => {
  const res = await node.request('POST', '/v1/payment_sessions', {
    key: m.apiKey,
    headers: { 'Idempotency-Key': key },
    body: { amount: 2, expires_in: '1h', paymentMethod: RAIL },
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
};
for (let k = 0; k < 5; k++) await create(`warm-${k}`);
counting = true;
for (let k = 0; k < N; k++) await create(`k-${k}`);
counting = false;
let total = 0;
console.log('| round trips per create | statement |\n|---|---|');
for (const [text, n] of [...counts].sort((a, b) => b[1] - a[1])) {
  total += n;
  console.log(`| ${(n / N).toFixed(2)} | \`${text.replace(/\|/g, '\\|')}…\` |`);
}
console.log(`\n${(total / N).toFixed(2)} round trips per session create (${N} creates)`);
await node.stop();
await db.drop();
process.exit(0);
