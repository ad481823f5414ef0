/**
 * Benchmark: payment-session creates per second on a cluster of 1, 2 and 3 nodes (`node index.ts`) on
 * PostgreSQL over NATS, and on 1 node on SQLite (the embedded default, the baseline), in one run, with the
 * CPU each node spent per request (user + system time from /proc, so an operator can size a cluster:
 * on a machine with N cores, more nodes than cores are not faster; the CPU per request is what adds up).
 *
 * Each configuration: a merchant, then `--seconds` of closed-loop clients (`--connections` in flight,
 * spread round-robin over the nodes), each request a POST /v1/payment_sessions with its own
 * Idempotency-Key. The database, NATS and the benchmark client run on the same machine as the nodes.
 *
 * Usage: npx node scripts/bench-cluster.ts [--seconds 10] [--connections 16]
 */
import { readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import { spawnNode, type ChildNode } from '../test/helpers/child-node.ts';
import { ensureNats } from '../test/helpers/nats.ts';
import { freshDatabase } from '../test/helpers/postgres.ts';
import { startSmtpReceiver } from '../test/helpers/smtp.ts';
import { http, tempDir, type TestNode } from '../test/helpers/node.ts';
import { registerMerchant } from '../test/helpers/merchant.ts';
import { arg } from './bench-lib.ts';

const SECONDS = arg('seconds', 10);
const CONNECTIONS = arg('connections', 16);
const TICK = 100; // clock ticks per second (USER_HZ)

/** user + system CPU seconds of a process so far */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

interface Result {
  label: string;
  nodes: number;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p95: number;
  cpuMsPerRequest: number[];
}

async function run(label: string, store: 'postgres' | 'sqlite', count: number): Promise<Result> {
  const smtp = await startSmtpReceiver();
  const db = store === 'postgres' ? await freshDatabase('bench_cluster') : null;
  const dirs = Array.from({ length: count }, () => tempDir('bench-cluster-'));
  const env: Record<string, string> = {
    STORE_URL: db ? db.url : `sqlite:${dirs[0]}/service.db`,
    MASTER_KEY: randomBytes(32).toString('hex'),
    SEED_MNEMONIC: Wallet.createRandom().mnemonic!.phrase,
    PUBLIC_URL: 'https://pay.example',
    SMTP_URL: smtp.url,
    TRUSTED_EMAIL_DOMAINS: 'trusted.test',
    RATE_LIMIT_PER_MINUTE: '10000000',
    PUBLIC_RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
    ...(count > 1 ? { TRANSPORTER: await ensureNats(), NAMESPACE: `bench-${randomBytes(4).toString('hex')}` } : {}),
  };
  const nodes: ChildNode[] = [];
  for (let i = 0; i < count; i++) nodes.push(await spawnNode({ ...env, DATA_DIR: dirs[i], NODE_ID: `bench-${i}` }));
  try {
    const on = { request: (m: string, p: string, o?: object) => http(nodes[0].url, m, p, o), call: async () => undefined };
    const m = await registerMerchant(on as unknown as TestNode, { codeFor: (e) => smtp.waitForCode(e) });
    // let the nodes see each other before measuring
    await new Promise((r) => setTimeout(r, count > 1 ? 3000 : 500));
    const body = { amount: 2, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } };
    let next = 0;
    let errors = 0;
    const times: number[] = [];
    const cpu0 = nodes.map((n) => cpuSeconds(n.proc.pid!));
    const t0 = performance.now();
    const until = t0 + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const node = nodes[next++ % nodes.length];
          const s = performance.now();
          const res = await http(node.url, 'POST', '/v1/payment_sessions', {
            key: m.apiKey,
            body,
            headers: { 'Idempotency-Key': randomBytes(12).toString('hex') },
          });
          if (res.status === 201) times.push(performance.now() - s);
          else errors++;
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = nodes.map((n, i) => cpuSeconds(n.proc.pid!) - cpu0[i]);
    times.sort((a, b) => a - b);
    const requests = times.length;
    return {
      label,
      nodes: count,
      requests,
      errors,
      perSecond: requests / elapsed,
      p50: times[Math.floor(requests * 0.5)] ?? NaN,
      p95: times[Math.floor(requests * 0.95)] ?? NaN,
      // each node serves about 1/count of the requests (round-robin), and also works for the others
      // (actor calls over NATS): its CPU divided by all requests is its share of the cost of one request
      cpuMsPerRequest: cpu.map((c) => (c * 1000) / Math.max(1, requests)),
    };
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await db?.drop();
    await smtp.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

const results: Result[] = [];
results.push(await run('SQLite, 1 node (embedded, the baseline)', 'sqlite', 1));
for (const n of [1, 2, 3]) results.push(await run(`PostgreSQL, ${n} node${n > 1 ? 's' : ''}${n > 1 ? ' over NATS' : ''}`, 'postgres', n));

const base = results[0].perSecond;
console.log(`\nsession creates, ${CONNECTIONS} clients in flight, ${SECONDS} s each, everything on this machine\n`);
console.log(
  '| cluster | creates/s | vs SQLite 1 node | p50 ms | p95 ms | errors | CPU ms per request, per node | CPU ms per request, all nodes |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.label} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / base).toFixed(2)}× | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.errors} | ${r.cpuMsPerRequest.map((c) => c.toFixed(2)).join(' / ')} | ${r.cpuMsPerRequest.reduce((a, b) => a + b, 0).toFixed(2)} |`,
  );
process.exit(0);
