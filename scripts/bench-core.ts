/**
 * Benchmark of the session hot path (issue 14, part 1): the service as `npm start` runs it (one process,
 * SQLite) against a bare `node:http` server answering the same requests in the same run, with autocannon
 * at 50 connections. Each endpoint is measured right after its bare twin, so the ratio pairs figures of
 * the same moment (the bare figure swings a lot on a shared VM). Then the idle RSS of a node, and reads on
 * one node against two nodes over NATS sharing one SQLite store.
 *
 * Usage: npm run bench:core [-- --duration 10 --connections 50 --rounds 1 --no-cluster | --cluster-only]
 */
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { benchMerchant, cannon, rssMb, startBare, startServiceProcess, type Figures, type ServiceProcess } from './bench-lib.ts';
import { tempDir } from '../test/helpers/node.ts';
import { ensureNats, stopNats } from '../test/helpers/nats.ts';

const argv = process.argv.slice(2);
const arg = (name: string, dflt: number) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};

async function merchant(svc: ServiceProcess): Promise<{ id: string; key: string }> {
  const reg = await benchMerchant(svc, 'core@bench.example', { rateLimit: '1000000000' });
  return { id: reg.id, key: reg.api_key };
}

const CREATE_BODY = JSON.stringify({
  amount: 12.5,
  expires_in: '1h',
  paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
  metadata: { order: 'bench' },
});

async function createSession(url: string, key: string): Promise<string> {
  const res = await fetch(`${url}/v1/payment_sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-API-Key': key },
    body: CREATE_BODY,
  });
  const body = (await res.json()) as { session_id: string };
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(body)}`);
  return body.session_id;
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(6)} req/s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(4)} ms${f.non2xx || f.errors ? `  (${f.non2xx} non-2xx, ${f.errors} errors)` : ''}`;

async function main() {
  const duration = arg('duration', 10);
  const connections = arg('connections', 50);
  const rounds = arg('rounds', 1);
  const cluster = !argv.includes('--no-cluster');
  console.log(`bench:core: autocannon, ${connections} connections, ${duration} s per measurement, node ${process.version}`);

  const bare = await startBare();
  if (argv.includes('--cluster-only')) {
    await twoNodes(duration, connections, bare.url);
    bare.stop();
    return;
  }
  const svc = await startServiceProcess({ TRUSTED_EMAIL_DOMAINS: 'bench.example' });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`idle RSS of a started node: ${rssMb(svc.child.pid!).toFixed(0)} MB`);
    const m = await merchant(svc);
    const json = { 'Content-Type': 'application/json', 'X-API-Key': m.key };
    const sessionId = await createSession(svc.url, m.key);
    // warm-up (JIT, worker pool, caches)
    await cannon({ url: `${svc.url}/v1/payment_sessions`, method: 'POST', headers: json, body: CREATE_BODY, duration: 2, connections });
    await cannon({ url: `${svc.url}/v1/payment_sessions/${sessionId}`, headers: { 'X-API-Key': m.key }, duration: 2, connections });
    const cases: Array<{
      name: string;
      target: { p99: number; ratio: number } | null;
      method: 'GET' | 'POST';
      path: string;
      headers: Record<string, string>;
      body?: string;
    }> = [
      {
        name: 'POST /v1/payment_sessions',
        target: { p99: 40, ratio: 0.4 },
        method: 'POST' as const,
        path: '/v1/payment_sessions',
        headers: json,
        body: CREATE_BODY,
      },
      {
        name: 'GET /v1/payment_sessions/{id}',
        target: { p99: 20, ratio: 0.5 },
        method: 'GET' as const,
        path: `/v1/payment_sessions/${sessionId}`,
        headers: { 'X-API-Key': m.key },
      },
      { name: 'GET /v1/me', target: { p99: 20, ratio: 0.5 }, method: 'GET' as const, path: '/v1/me', headers: { 'X-API-Key': m.key } },
      // refusals: an API key of the right shape that no merchant holds, and a body the schema refuses. A
      // refusal should cost no more than an answer (a flood of bad keys needs no account); it did: a 401 cost
      // 1.7 × a GET /v1/me of CPU (its stack captured twice, its body in chunked framing)
      {
        name: 'GET /v1/me with an unknown API key (401)',
        target: null,
        method: 'GET' as const,
        path: '/v1/me',
        headers: { 'X-API-Key': `${m.key.slice(0, -6)}000000` },
      },
      {
        name: 'POST /v1/payment_sessions with an empty body (400)',
        target: null,
        method: 'POST' as const,
        path: '/v1/payment_sessions',
        headers: json,
        body: '{}',
      },
      {
        name: 'GET /v1/payment_methods (floor)',
        target: null,
        method: 'GET' as const,
        path: '/v1/payment_methods',
        headers: {} as Record<string, string>,
      },
    ];
    for (let round = 1; round <= rounds; round++) {
      if (rounds > 1) console.log(`round ${round}`);
      for (const c of cases) {
        const b = await cannon({ url: `${bare.url}${c.path}`, method: c.method, headers: c.headers, body: c.body, duration, connections });
        const s = await cannon({ url: `${svc.url}${c.path}`, method: c.method, headers: c.headers, body: c.body, duration, connections });
        const ratio = s.rps / b.rps;
        const verdict = c.target
          ? `  target ≥ ${c.target.ratio}, p99 ≤ ${c.target.p99} ms: ${ratio >= c.target.ratio && s.p99 <= c.target.p99 ? 'met' : 'NOT met'}`
          : '';
        console.log(`${c.name}\n  bare    ${fmt(b)}\n  service ${fmt(s)}\n  ratio ${ratio.toFixed(3)}${verdict}`);
      }
    }
    await new Promise((r) => setTimeout(r, 3000));
    console.log(`RSS of the node after the load, idle again: ${rssMb(svc.child.pid!).toFixed(0)} MB`);
  } finally {
    await svc.stop();
  }

  if (cluster) await twoNodes(duration, connections, bare.url);
  bare.stop();
}

/** Reads on one node, then on two nodes over NATS sharing one SQLite file (half the connections each). */
async function twoNodes(duration: number, connections: number, bareUrl: string) {
  const nats = await ensureNats();
  const dir = tempDir('bench-cluster-');
  const shared = {
    TRANSPORTER: nats,
    NAMESPACE: `bench-${randomBytes(4).toString('hex')}`,
    STORE_URL: `sqlite:${join(dir, 'shared.db')}`,
    MASTER_KEY: randomBytes(32).toString('hex'),
    TRUSTED_EMAIL_DOMAINS: 'bench.example',
    SEED_MNEMONIC: 'test test test test test test test test test test test junk',
  };
  const a = await startServiceProcess({ ...shared, NODE_ID: 'bench-a' });
  const b = await startServiceProcess({ ...shared, NODE_ID: 'bench-b' });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    console.log(`two nodes over NATS, idle RSS ${rssMb(a.child.pid!).toFixed(0)} + ${rssMb(b.child.pid!).toFixed(0)} MB`);
    const m = await merchant(a);
    const id = await createSession(a.url, m.key);
    const path = `/v1/payment_sessions/${id}`;
    const headers = { 'X-API-Key': m.key };
    await cannon({ url: `${a.url}${path}`, headers, duration: 2, connections });
    await cannon({ url: `${b.url}${path}`, headers, duration: 2, connections });
    const bare = await cannon({ url: `${bareUrl}${path}`, headers, duration, connections });
    const one = await cannon({ url: `${a.url}${path}`, headers, duration, connections });
    const [x, y] = await Promise.all([
      cannon({ url: `${a.url}${path}`, headers, duration, connections: connections / 2 }),
      cannon({ url: `${b.url}${path}`, headers, duration, connections: connections / 2 }),
    ]);
    console.log(
      `GET /v1/payment_sessions/{id} on the cluster (bare ${bare.rps.toFixed(0)} req/s)\n  one node  ${fmt(one)}\n  two nodes ${(x.rps + y.rps).toFixed(0).padStart(6)} req/s  p99 ${Math.max(x.p99, y.p99)} ms  (${((x.rps + y.rps) / one.rps).toFixed(2)} × one node)`,
    );
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await stopNats();
    rmSync(dir, { recursive: true, force: true });
  }
}

// child mode: the bare baseline, a node:http server that reads the body, parses it and answers JSON
if (argv[0] === '--bare') {
  const session = JSON.stringify({
    session_id: `ps_${'0'.repeat(26)}`,
    status: 'pending',
    address: `0x${'ab'.repeat(20)}`,
    padding: 'x'.repeat(900),
  });
  createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (chunks.length) JSON.parse(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(session);
    });
  }).listen(Number(argv[1]), '127.0.0.1');
} else {
  await main();
}
