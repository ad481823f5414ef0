/**
 * Benchmark of the memory of one node (issue 22: ≤ 150 MB idle after start, ≤ 200 MB after 10,000
 * sessions and 10,000 spends): `node index.ts` as `npm start` runs it (bench-lib), on a fresh data dir
 * (SQLite, every service), over HTTP. Resident set size of the process:
 *  - a bare node process in the same run (the floor: the runtime alone);
 *  - a first start on an empty compile cache (npm start's NODE_COMPILE_CACHE), which fills it; every
 *    measurement after is of a second start, as every start after the first one is;
 *  - the service when it answers, and after `--settle` seconds idle;
 *  - after 10,000 sessions (`POST /v1/payment_sessions`) and 10,000 recorded spend attempts over ten
 *    funded agent wallets with a policy (`POST /v1/agent-wallets/{id}/spend-attempts`), 20 clients each;
 *  - after `--settle` and twice `--settle` seconds idle again.
 * Usage: npm run bench:memory -- [--sessions 10000 --spends 10000 --settle 60]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, benchMerchant, load, rssMb, startServiceProcess } from './bench-lib.ts';

const sessionCount = arg('sessions', 10_000);
const spendCount = arg('spends', 10_000);
const settle = arg('settle', 60);
/** pages the process freed with MADV_FREE: counted in RSS until the kernel wants them back */
const lazyFreeMb = (pid: number) => Number(/LazyFree:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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

console.log(`bench:memory, node ${process.version}, load average at start ${loadavg()[0].toFixed(1)}`);

// the floor: a bare node process, idle
const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
await sleep(1500);
const bareRss = rssMb(bare.pid!);
bare.kill('SIGTERM');

// npm start's compile cache, empty: the first start strips the types of every module and fills the cache
const compileCache = mkdtempSync(join(tmpdir(), 'bench-compile-cache-'));
const env = { TRUSTED_EMAIL_DOMAINS: 'bench.example', NODE_COMPILE_CACHE: compileCache };
const cold = await startServiceProcess(env);
const rows: Array<[string, number, number]> = [
  ['bare node process (baseline)', bareRss, 0],
  ['service, first start (compile cache empty), when it answers', rssMb(cold.child.pid!), lazyFreeMb(cold.child.pid!)],
];
await cold.stop();
// every later start, measured from here on: the compile cache is filled, the TypeScript stripper never loads
const svc = await startServiceProcess(env);
const pid = svc.child.pid!;
try {
  rows.push(['service, when it first answers', rssMb(pid), lazyFreeMb(pid)]);
  await sleep(settle * 1000);
  rows.push([`service, idle ${settle} s after start`, rssMb(pid), lazyFreeMb(pid)]);

  const reg = await benchMerchant(svc, 'memory@bench.example');
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${svc.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await r.json()) as any;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };

  const sessionBody = JSON.stringify({
    amount: 1,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' },
  });
  const sessions = await load(
    sessionCount,
    20,
    async () => (await fetch(`${svc.url}/v1/payment_sessions`, { method: 'POST', headers, body: sessionBody })).status,
  );

  // ten funded agent wallets with a policy (sandbox money: a simulated session, then a payout into each)
  const funding = await call('POST', '/v1/payment_sessions', {
    amount: 900,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' },
  });
  await call('POST', `/v1/payment_sessions/${funding.session_id}/simulate`);
  const settlement = (await call('GET', '/v1/wallets?limit=100')).data.find((w: { is_default: boolean }) => w.is_default);
  const agents: string[] = [];
  for (let i = 0; i < 10; i++) {
    const w = await call('POST', '/v1/wallets', { type: 'agent', chain: 'ethereum', network: 'testnet' });
    await call('POST', '/v1/payouts', { wallet_id: settlement.id, token: 'USDC', destination: w.address, amount_subunits: '80000000' });
    await call('PUT', `/v1/agent-wallets/${w.id}/policy`, POLICY);
    agents.push(w.id);
  }
  const spendBody = JSON.stringify({
    target: settlement.address,
    amount: 0.001,
    amount_subunits: '1000',
    token_symbol: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
  });
  const spends = await load(spendCount, 20, async (i) => {
    const r = await fetch(`${svc.url}/v1/agent-wallets/${agents[i % agents.length]}/spend-attempts`, {
      method: 'POST',
      headers,
      body: spendBody,
    });
    const a = (await r.json()) as { status?: string };
    return r.status === 201 && a.status === 'pending' ? 201 : r.status >= 400 ? r.status : 422;
  });
  rows.push([
    `service, after ${sessionCount} sessions (${sessions.errors} errors) and ${spendCount} spends (${spends.errors} errors)`,
    rssMb(pid),
    lazyFreeMb(pid),
  ]);
  // session actors deactivate after 60 s idle (actors/runtime.ts), and V8 gives pages back once it sees the idleness
  for (const n of [1, 2]) {
    await sleep(settle * 1000);
    rows.push([`service, idle ${n * settle} s after that`, rssMb(pid), lazyFreeMb(pid)]);
  }
} finally {
  await svc.stop();
  rmSync(compileCache, { recursive: true, force: true });
}
console.log('\n| what | RSS | × bare node | of it freed lazily (MADV_FREE) |\n|---|---|---|---|');
for (const [what, mb, lazy] of rows)
  console.log(`| ${what} | ${mb.toFixed(0)} MB | ${(mb / bareRss).toFixed(2)} | ${lazy.toFixed(0)} MB |`);
console.log(`\nload average at the end ${loadavg()[0].toFixed(1)}`);
