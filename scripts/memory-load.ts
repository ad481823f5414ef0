/**
 * The memory goal's measurement (issue 22: idle RSS of `npm start` ≤ 150 MB after start, ≤ 200 MB after
 * 10,000 sessions and 10,000 spends), shared by bench:memory and bench:agents: a fresh `node index.ts` as
 * `npm start` runs it (bench-lib), on a fresh data dir (SQLite, every service), over HTTP, with no other load
 * in it. Resident set size of the process at each point, and how much of it is freed lazily (MADV_FREE).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchMerchant, fundedAgentWallets, load, rssMb, spendAttempt, startServiceProcess } from './bench-lib.ts';

export interface Reading {
  mb: number;
  /** of it, pages freed with MADV_FREE: counted in RSS until the kernel wants them back */
  lazyMb: number;
}

export interface MemoryRun {
  /** a bare node process, idle: the floor, the runtime alone */
  bare: number;
  /** a first start on an empty compile cache (only with `cold`) */
  cold?: Reading;
  /** when the service first answers */
  answers: Reading;
  /** idle `settle` seconds after start */
  idleStart: Reading;
  /** right after the load */
  rightAfter: Reading;
  /** idle `settle` and twice `settle` seconds after the load */
  idleAfter: [Reading, Reading];
  sessionErrors: number;
  spendErrors: number;
}

const POLICY = {
  limits: {
    'ethereum:testnet:USDC': {
      per_attempt_subunits: '5000000',
      approval_above_subunits: '3000000',
      windows: [{ duration: '24h', max_subunits: '100000000000', max_count: 1000000 }],
    },
  },
  allowed_targets: [],
  denied_targets: [],
  allowed_api_domains: [],
  allow_mainnet: false,
  expires_at: null,
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function reading(pid: number): Reading {
  const lazy = Number(/LazyFree:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
  return { mb: rssMb(pid), lazyMb: lazy };
}

/**
 * `sessions` POST /v1/payment_sessions, then `spends` recorded spend attempts over ten funded agent wallets
 * with a policy, 20 clients each. With `cold`, the service is first started once on an empty compile cache
 * (which fills it; npm start's NODE_COMPILE_CACHE), and the measured start is the second, as every start after
 * the first one is; without it, on npm start's own cache.
 */
export async function measureMemory(o: { sessions: number; spends: number; settle: number; cold: boolean }): Promise<MemoryRun> {
  const bareChild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await sleep(1500);
  const bare = rssMb(bareChild.pid!);
  bareChild.kill('SIGTERM');

  const compileCache = o.cold ? mkdtempSync(join(tmpdir(), 'bench-compile-cache-')) : undefined;
  const env: Record<string, string> = {
    TRUSTED_EMAIL_DOMAINS: 'bench.example',
    ...(compileCache ? { NODE_COMPILE_CACHE: compileCache } : {}),
  };
  let cold: Reading | undefined;
  if (compileCache) {
    const first = await startServiceProcess(env);
    cold = reading(first.child.pid!);
    await first.stop();
  }
  const svc = await startServiceProcess(env);
  const pid = svc.child.pid!;
  try {
    const answers = reading(pid);
    await sleep(o.settle * 1000);
    const idleStart = reading(pid);

    const reg = await benchMerchant(svc, 'memory@bench.example');
    const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${svc.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await r.json()) as any;
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
      return json;
    };
    const paymentMethod = { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' };
    const sessionBody = JSON.stringify({ amount: 1, expires_in: '1h', paymentMethod });
    const sessions = await load(
      o.sessions,
      20,
      async () => (await fetch(`${svc.url}/v1/payment_sessions`, { method: 'POST', headers, body: sessionBody })).status,
    );

    // ten funded agent wallets with a policy (sandbox money)
    const { settlement, agents } = await fundedAgentWallets(call, 10, POLICY);
    const spendBody = JSON.stringify(spendAttempt(settlement.address));
    const spends = await load(o.spends, 20, async (i) => {
      const r = await fetch(`${svc.url}/v1/agent-wallets/${agents[i % agents.length].id}/spend-attempts`, {
        method: 'POST',
        headers,
        body: spendBody,
      });
      const a = (await r.json()) as { status?: string };
      return r.status === 201 && a.status === 'pending' ? 201 : r.status >= 400 ? r.status : 422;
    });
    const rightAfter = reading(pid);
    // the node gives memory back once idle (lib/runtime/memory-reducer.ts); session actors deactivate after 60 s
    await sleep(o.settle * 1000);
    const first = reading(pid);
    await sleep(o.settle * 1000);
    return {
      bare,
      cold,
      answers,
      idleStart,
      rightAfter,
      idleAfter: [first, reading(pid)],
      sessionErrors: sessions.errors,
      spendErrors: spends.errors,
    };
  } finally {
    await svc.stop();
    if (compileCache) rmSync(compileCache, { recursive: true, force: true });
  }
}
