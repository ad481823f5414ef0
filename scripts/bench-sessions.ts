/**
 * Benchmark: POST /v1/payment_sessions throughput and latency at 50 concurrent clients on the embedded
 * default (`npm start` as a child process: one process, SQLite), one run per chain (Ethereum BIP-44 and
 * Solana SLIP-0010 derivation differ in cost), then GET of the created sessions.
 * Usage: npx node scripts/bench-sessions.ts [--requests 3000 --concurrency 50]
 */
import { arg, benchMerchant, load, startServiceProcess } from './bench-lib.ts';

const requests = arg('requests', 3000);
const concurrency = arg('concurrency', 50);

const svc = await startServiceProcess({ TRUSTED_EMAIL_DOMAINS: 'bench.example' });
try {
  const reg = await benchMerchant(svc, 'sessions@bench.example');
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
  const ids: string[] = [];
  const create = (chain: string) => async () => {
    const res = await fetch(`${svc.url}/v1/payment_sessions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        amount: 12.5,
        expires_in: '1h',
        paymentMethod: { methodID: 0, chain, network: 'testnet', token: 'USDC' },
        metadata: { order: 'bench' },
      }),
    });
    const body = (await res.json()) as { session_id?: string };
    if (body.session_id) ids.push(body.session_id);
    return res.status;
  };
  await load(300, 10, create('ethereum')); // warm-up
  console.log(
    `POST /v1/payment_sessions, ${requests} requests per run, ${concurrency} concurrent clients, embedded default (one process, SQLite):`,
  );
  for (const chain of ['ethereum', 'solana']) {
    const r = await load(requests, concurrency, create(chain));
    console.log(
      `  ${chain.padEnd(8)} USDC: ${r.perSecond.toFixed(0)} sessions/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.errors} errors ${JSON.stringify(r.statuses)}`,
    );
  }
  const unique = new Set(ids).size;
  const get = await load(requests, concurrency, async (i) => {
    const res = await fetch(`${svc.url}/v1/payment_sessions/${ids[i % ids.length]}`, { headers: { 'X-API-Key': reg.api_key } });
    await res.arrayBuffer();
    return res.status;
  });
  console.log(
    `GET /v1/payment_sessions/{id}: ${get.perSecond.toFixed(0)} req/s, p50 ${get.p50.toFixed(1)} ms, p99 ${get.p99.toFixed(1)} ms, ${get.errors} errors`,
  );
  console.log(`${unique} sessions created, ${unique} distinct ids`);
} finally {
  await svc.stop();
}
