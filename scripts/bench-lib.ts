/** Shared pieces of the benchmarks: a service child process, a bounded load loop, autocannon, percentiles, RSS. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, untilListening } from '../test/helpers/ports.ts';

export interface ServiceProcess {
  url: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The V8 flags `npm start` (package.json) and the Dockerfile give the node: the young generation capped at
 * 2 × 8 MB (V8 grows it to 2 × 64 MB under load on a large machine: ~90 MB of RSS; see docs/benchmarks.md,
 * memory). BENCH_NODE_FLAGS replaces them (space-separated) to measure others.
 */
/** the number after `--name` on the command line, else `dflt` */
export function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=8').split(' ').filter(Boolean);
/**
 * Node's compile cache, as `npm start` sets it: the type-stripped sources (and V8's code cache) of every
 * module, so that a node started again never loads the TypeScript stripper (~17 MB resident; see
 * docs/benchmarks.md, memory). An env of startServiceProcess may name another directory.
 */
export const COMPILE_CACHE = 'node_modules/.cache/node-compile-cache';

/** `node index.ts` on a free port with a fresh data dir: the embedded default, as `npm start` runs it. */
export async function startServiceProcess(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'));
  const fullEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    NODE_COMPILE_CACHE: COMPILE_CACHE,
    ...env,
  };
  // BENCH_CPU_PROF=<dir>: the service writes a V8 CPU profile there when it stops (NODE_OPTIONS refuses --cpu-prof)
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, ...NODE_FLAGS, 'index.ts'], { env: fullEnv, stdio: ['ignore', 'inherit', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  // a minute (the default): a node opening a large database on a loaded machine takes a while; and the
  // answer must be the child's own, or another server's CPU would be measured as the service's
  await untilListening('the service', child, port, async () => (await fetch(`${url}/v1/payment_methods`)).ok);
  return {
    url,
    dataDir,
    env: fullEnv,
    child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<number, number>;
}

/** `total` requests from `concurrency` clients; latency in milliseconds. */
export async function load(total: number, concurrency: number, send: (i: number) => Promise<number>): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        try {
          const status = await send(i);
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 400) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: total,
    errors,
    seconds,
    perSecond: total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses,
  };
}

/** The bare node:http server of bench:core (`--bare`: reads the body, answers a fixed JSON), the baseline of the HTTP rows. */
export async function startBare(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [fileURLToPath(new URL('./bench-core.ts', import.meta.url)), '--bare', String(port)], {
    stdio: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  await untilListening('the bare server', child, port, async () => !!(await fetch(url)), { timeoutMs: 30_000, everyMs: 50 });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** autocannon's figures of one run (the load generator of the comparisons with a bare node:http server) */
export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** 2xx answers */
  ok: number;
}

export async function cannon(opts: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  duration: number;
  connections: number;
  /** this many requests, then stop (instead of `duration` seconds; autocannon then ends on its 1 s tick, so its rate is coarse) */
  amount?: number;
  /** a sequence each connection sends in turn (autocannon's requests: setupRequest, onResponse, a context) */
  requests?: autocannon.Request[];
}): Promise<Figures & { window: Window }> {
  // autocannon's unaggregated result keeps the latency histogram, so that windows can be summed (mergeWindows)
  const raw = (await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    duration: opts.duration,
    connections: opts.connections,
    ...(opts.amount ? { amount: opts.amount } : {}),
    skipAggregateResult: true,
    ...(opts.requests ? { requests: opts.requests } : {}),
  } as autocannon.Options)) as unknown as Window;
  return { ...mergeWindows([raw]), window: raw };
}

/** One autocannon run unaggregated: what mergeWindows sums. */
export interface Window {
  totalCompletedRequests: number;
  duration: number;
}

/** The figures of autocannon windows taken together: requests over their summed seconds, percentiles of every request. */
export function mergeWindows(windows: Window[]): Figures {
  // in autocannon, not in its types
  const { aggregateResult } = autocannon as unknown as { aggregateResult(w: Window[], o: object): autocannon.Result };
  const r = aggregateResult(windows, { url: 'http://127.0.0.1', connections: 1 });
  const requests = windows.reduce((n, w) => n + w.totalCompletedRequests, 0);
  const seconds = windows.reduce((n, w) => n + w.duration, 0);
  return {
    rps: requests / Math.max(seconds, 1e-9),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    ok: r['2xx'],
  };
}

/** the resident set of a process, in MB */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process has used so far (Linux /proc; clock ticks of 100 Hz) */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface BenchMerchant {
  id: string;
  api_key: string;
  webhook_secret: string;
}

/**
 * A sandbox merchant on a bench service, registered as an operator-created user does (no email round),
 * with a request limit no benchmark reaches.
 */
export async function benchMerchant(
  svc: ServiceProcess,
  email: string,
  o: { webhook_url?: string; rateLimit?: string } = {},
): Promise<BenchMerchant> {
  // asynchronous, so that this process keeps reading its sockets meanwhile: a blocked loop misses the server
  // closing an idle kept-alive connection, and the next request on it fails with "other side closed"
  const operator = async (...args: string[]) =>
    (await promisify(execFile)(process.execPath, ['scripts/operator.ts', ...args], { env: svc.env, encoding: 'utf8' })).stdout;
  const { bearer_token } = JSON.parse(await operator('create-user', email)) as { bearer_token: string };
  const res = await fetch(`${svc.url}/v1/merchants`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${bearer_token}` },
    body: JSON.stringify({ name: 'Bench', sandbox: true, ...(o.webhook_url ? { webhook_url: o.webhook_url } : {}) }),
  });
  const reg = (await res.json()) as BenchMerchant;
  if (res.status !== 201) throw new Error(`bench merchant: ${res.status} ${JSON.stringify(reg)}`);
  await operator('set-rate-limit', reg.id, o.rateLimit ?? '100000000');
  return reg;
}

/** an agent spend attempt of `subunits` of testnet USDC to `target` (settled in the ledger when it is one of ours) */
export const spendAttempt = (target: string, extra: Record<string, unknown> = {}, subunits = '1000') => ({
  target,
  amount: Number(subunits) / 1e6,
  amount_subunits: subunits,
  token_symbol: 'USDC',
  chain: 'ethereum',
  network: 'testnet',
  ...extra,
});

/**
 * `n` agent wallets on ethereum testnet under `policy`, each funded with 800 USDC of sandbox money (a
 * simulated session into the merchant's settlement wallet, then a payout from it into each); `call` is the
 * caller's authenticated JSON request. 800 USDC is 80,000 paid requests of the x402 minimum (0.01 USDC) a
 * wallet: with 80, a machine ~2.6× faster than 2026-11-26's would have emptied bench:agents' nine paying
 * wallets within its paid row (its one-wallet spend row did empty its wallet on that machine).
 */
export async function fundedAgentWallets(
  call: (method: string, path: string, body?: unknown) => Promise<any>,
  n: number,
  policy: object,
): Promise<{ settlement: { id: string; address: string }; agents: Array<{ id: string; address: string }> }> {
  const session = await call('POST', '/v1/payment_sessions', {
    amount: 9000,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' },
  });
  await call('POST', `/v1/payment_sessions/${session.session_id}/simulate`);
  const settlement = (await call('GET', '/v1/wallets?limit=100')).data.find((w: { is_default: boolean }) => w.is_default);
  const agents: Array<{ id: string; address: string }> = [];
  for (let i = 0; i < n; i++) {
    const w = await call('POST', '/v1/wallets', { type: 'agent', chain: 'ethereum', network: 'testnet' });
    await call('POST', '/v1/payouts', { wallet_id: settlement.id, token: 'USDC', destination: w.address, amount_subunits: '800000000' });
    await call('PUT', `/v1/agent-wallets/${w.id}/policy`, policy);
    agents.push(w);
  }
  return { settlement, agents };
}
