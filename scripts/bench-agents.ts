/**
 * Benchmark of pay-per-request (issue 22): every goal measured beside its baseline in ONE run, on the
 * embedded default (`node index.ts` as a child process, SQLite) with a local Hardhat chain:
 *  - spend attempts on ONE agent wallet (settled in the ledger) at 50 autocannon connections against
 *    GET /v1/me, with the exactness check read back through the API (the wallet lost exactly the amounts
 *    of the attempts the service recorded, in the row and over its life); the same over 10 wallets, and
 *    the dry-run evaluation; and one wallet whose windows hold a day of spends (a bucket per minute);
 *  - a whole paid x402 request (challenge → agent spend → redeem, one autocannon sequence) against three
 *    GET /v1/me, then each of its steps alone against GET /v1/me (where a paid request's time goes);
 *  - redeem latency one at a time: an agent-wallet proof, and an EIP-3009 authorization whose service
 *    share is its latency less the time the service waited on the chain's RPC (measured by a pass-through
 *    in front of the node), beside a bare ethers client's send + receipt of the same kind of transaction;
 *    one signed by the unmodified @x402/evm client (x402 v2 PaymentPayload, random nonce), and the same
 *    v2 payment settled through the facilitator (POST /v1/x402/facilitator/settle);
 *  - POST /v1/payment_sessions and GET of a session against a bare node:http server (autocannon);
 *  - event streams: CPU of 1,000 open idle GET /v1/events/stream, and commit → event on a stream;
 *  - idle RSS of a fresh node after start, and after exactly 10,000 sessions and 10,000 spends (./memory-load.ts,
 *    as bench:memory; last, alone), and for information that of this run's own service after all its rows;
 *  - ledger transfers against raw store writes of the same rows (scripts/bench-ledger.ts, after the rest).
 * The machine is shared: each goal is a ratio against a baseline measured in the same run, and the
 * load average is printed with the results.
 * Usage: npm run bench:agents -- [--quick (the spend and paid rows only) --transfers 10000 (ledger) --concurrency 50 --rounds 6 --round-seconds 2 (the two goal rows) --duration 5 (the others) --step-requests 4000 (each paid step alone) --redeems 100 --streams 1000 --memory-settle 30]
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Wallet, parseEther } from 'ethers';
import type autocannon from 'autocannon';
import {
  arg,
  benchMerchant,
  fundedAgentWallets,
  spendAttempt,
  cannon,
  cpuSeconds,
  type Figures,
  mergeWindows,
  type Window,
  load,
  percentile,
  rssMb,
  startBare,
  startServiceProcess,
} from './bench-lib.ts';
import { startHardhatNode } from '../test/harness/hardhat-node.ts';
import { freePort } from '../test/helpers/ports.ts';
import { evaluate, parsePolicy } from '../lib/spend/policy.ts';
import { signEip3009Proof } from '../lib/x402/payer.ts';
import { encodeHeader } from '../lib/x402/challenge.ts';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { eip3009Intent } from '../lib/x402/settle.ts';
import { openStore } from '../lib/store/index.ts';
import { measureMemory } from './memory-load.ts';

/** ledger transfers of the ledger row (scripts/bench-ledger.ts): at 3,000 its ratio swung 0.62-0.92 run to run */
const transfers = arg('transfers', 10000);
const concurrency = arg('concurrency', 50);
/**
 * requests of each of a paid request's steps measured alone (challenges, the spends paying them, their
 * redeems): fewer than the 4,096 challenges a node keeps after issuing them (lib/x402/known.ts), so that the
 * spends and redeems find theirs as a paid request's do, instead of reading the oldest back from the store
 */
const stepRequests = arg('step-requests', 4000);
const redeems = arg('redeems', 100);
const duration = arg('duration', 5);
/** the two goal rows (one wallet's spends, a paid request) and their baselines: rounds of this many seconds each */
const rounds = arg('rounds', 6);
const roundSeconds = arg('round-seconds', 2);
const streamCount = arg('streams', 1000);
/** seconds the memory row's fresh node idles after start and (twice) after its load */
const memorySettle = arg('memory-settle', 30);
/** --quick: the spend and paid-request rows only (what a change to the spend path moves), in a minute */
const quick = process.argv.includes('--quick');
const RAIL = 'ethereum:testnet:USDC';
/** the minutes of a day before the current one: a wallet that spent in each holds a bucket for each */
const DAY_BUCKETS = 1439;
const POLICY = {
  limits: {
    [RAIL]: {
      per_attempt_subunits: '5000000',
      approval_above_subunits: '3000000',
      windows: [
        { duration: '24h', max_subunits: '100000000000', max_count: 1000000 },
        { duration: '1h', max_subunits: '100000000000' },
      ],
    },
  },
  allowed_targets: [],
  denied_targets: [],
  allowed_api_domains: [],
  allow_mainnet: false,
  expires_at: null,
};
const load1 = () => loadavg()[0].toFixed(1);

/** one goal: what was measured, against what, and whether it is met */
interface Goal {
  goal: string;
  measured: string;
  baseline: string;
  met: boolean;
}
const goals: Goal[] = [];

function pure(): number {
  const policy = parsePolicy(POLICY);
  const spends = Array.from({ length: 200 }, (_, i) => ({ rail: RAIL, amount: 1000n, at: Date.now() - i * 60_000 }));
  const facts = {
    caller_merchant_id: 'mer_1',
    merchant: { sandbox: true, kyc_verified: false },
    wallet: { merchant_id: 'mer_1', type: 'agent', chain: 'ethereum', network: 'testnet' },
    rail_enabled: true,
    attempt: { chain: 'ethereum', network: 'testnet', token: 'USDC', target: '0x00000000000000000000000000000000000000aa', amount: 1000n },
    policy,
    spends,
    now: new Date(),
  };
  const n = 20_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) evaluate(facts);
  return n / ((performance.now() - t0) / 1000);
}

/**
 * The service's RPC endpoint: a pass-through to the chain that records when each call is in flight, so
 * that a redeem's time waiting on the chain (send, receipt, reads; the block itself on a real chain) is
 * measured, not guessed: its service share is its latency less that time. The hop's own cost counts as
 * the service's.
 */
async function rpcProxy(target: string): Promise<{ url: string; waited(from: number, to: number): number; stop(): void }> {
  const spans: Array<[number, number]> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const t0 = performance.now();
      fetch(target, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => {
          const body = Buffer.from(await r.arrayBuffer());
          spans.push([t0, performance.now()]);
          res.writeHead(r.status, { 'Content-Type': 'application/json' }).end(body);
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${port}`,
    /** milliseconds of [from, to] during which at least one call was in flight */
    waited(from, to) {
      const inside = spans
        .filter(([a, b]) => b > from && a < to)
        .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
        .sort((x, y) => x[0] - y[0]);
      let total = 0;
      let end = -Infinity;
      for (const [a, b] of inside) {
        if (b <= end) continue;
        total += b - Math.max(a, end);
        end = b;
      }
      return total;
    },
    stop: () => void server.close(),
  };
}

console.log(`bench:agents, node ${process.version}, load average at start ${load1()}`);
const evaluations = pure();
const chain = await startHardhatNode();
const usdc = await chain.deployTestUsdc();
const bare = await startBare();
const rpc = await rpcProxy(chain.url);
const svc = await startServiceProcess({
  TRUSTED_EMAIL_DOMAINS: 'bench.example',
  ETHEREUM_TESTNET_RPC_URL: rpc.url,
  ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
  ETHEREUM_TESTNET_CONFIRMATIONS: '1',
  CHAIN_POLL_INTERVAL_MS: '60000',
});
const pid = svc.child.pid!;
const lines: string[] = [];
try {
  await new Promise((r) => setTimeout(r, 3000));
  const rssStart = rssMb(pid);
  const reg = await benchMerchant(svc, 'agents@bench.example');
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
  const call = async (method: string, path: string, body?: unknown) => {
    const send = () => fetch(`${svc.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    // a kept-alive socket the server closed while the set-up was idle: the request never arrived, send again
    const r = await send().catch((e: { cause?: { code?: string } }) => (e.cause?.code === 'UND_ERR_SOCKET' ? send() : Promise.reject(e)));
    const json = (await r.json()) as any;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };

  // ten funded agent wallets with a policy (sandbox money)
  const { settlement, agents } = await fundedAgentWallets(call, 10, POLICY);
  /** what the wallet holds of USDC (`available` counts real and sandbox money) */
  const holding = async (walletId: string) =>
    BigInt((await call('GET', `/v1/wallets/${walletId}`)).balances.find((x: { token: string }) => x.token === 'USDC').available_subunits);
  const funded = await Promise.all(agents.map((a) => holding(a.id)));
  // spends settle in the ledger: to the merchant's settlement wallet (one of ours). 100 subunits each: a wallet
  // (800 USDC) holds 8,000,000 of them; at 1,000 subunits and 80 USDC, the one-wallet row's 12 s (7,500/s on a
  // fast machine) emptied it, and the attempts after were denied (counted as errors, and cheaper than recorded ones)
  const spendBody = JSON.stringify(spendAttempt(settlement.address, {}, '100'));
  let spends = 0;
  /** a recorded spend: its amount is counted when the service answers it was allowed */
  const spend = (wallet: (i: number) => string, recorded?: { amount: bigint }) => async (i: number) => {
    const r = await fetch(`${svc.url}/v1/agent-wallets/${wallet(i)}/spend-attempts`, { method: 'POST', headers, body: spendBody });
    const a = (await r.json()) as { status?: string; amount_subunits?: string };
    spends++;
    if (recorded && r.status === 201 && a.status === 'pending') recorded.amount += BigInt(a.amount_subunits!);
    return r.status === 201 && a.status === 'pending' ? 201 : r.status >= 400 ? r.status : 422;
  };
  const evaluate = async (i: number) =>
    (
      await fetch(`${svc.url}/v1/agent-wallets/${agents[i % 10].id}/spend-attempts/evaluate`, {
        method: 'POST',
        headers,
        body: spendBody,
      })
    ).status;
  const me = async () => (await fetch(`${svc.url}/v1/me`, { headers })).status;
  /** the x402 challenge every paid request here asks for: 0.01 testnet USDC for `resource` */
  const challengeOf = (resource: string) => ({
    resource,
    amount_subunits: '10000',
    paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
  });
  // an hour's life: a Hardhat chain mining a block per transaction runs ahead of the wall clock (one second
  // per block), and a v2 client signs validBefore = now + what is left of the challenge's life, so with the
  // default 5 minutes the last facilitator settlements reverted on chain as expired
  const challenge = (i: number, label: string) =>
    call('POST', '/v1/x402/challenges', { expires_in: '1h', ...challengeOf(`/${label}/${i}`) });
  /** the spend attempt that pays a challenge (its reference is the challenge id) */
  const paying = (c: { challenge_id: string; challenge: { payTo: string } }) =>
    spendAttempt(c.challenge.payTo, { reference: c.challenge_id }, '10000');
  /** a whole paid request: the challenge, the agent's spend that pays it, the redeem of its proof */
  const paid = (label: string) => async (i: number) => {
    const c = await challenge(i, label);
    const a = await call('POST', `/v1/agent-wallets/${agents[1 + (i % 9)].id}/spend-attempts`, paying(c));
    const r = await call('POST', '/v1/x402/redeem', { proof: a.spend_reference, resource: `/${label}/${i}` });
    return r.status === 'settled' ? 200 : 500;
  };

  // warm-up (JIT, caches, the actors)
  await load(300, 10, me);
  await load(300, 10, evaluate);
  await load(
    300,
    10,
    spend((i) => agents[i % 10].id),
  );
  await load(100, 10, paid('warm'));

  // autocannon rows, `duration` seconds each at `concurrency` connections; each right after its baseline
  const spendPath = (id: string) => `/v1/agent-wallets/${id}/spend-attempts`;
  /** what autocannon's answers recorded: spends allowed (their amounts summed) and anything else */
  const tally = () => ({ amount: 0n, recorded: 0, other: 0 });
  const spendRequests = (wallets: string[], sum: ReturnType<typeof tally>, path = spendPath): autocannon.Request[] => {
    let k = 0;
    return [
      {
        method: 'POST',
        headers,
        body: spendBody,
        setupRequest: (req) => ({ ...req, path: path(wallets[k++ % wallets.length]) }),
        onResponse: (status, body) => {
          spends++;
          const a = status === 201 ? (JSON.parse(body) as { status: string; amount_subunits: string }) : null;
          if (a?.status === 'pending') {
            sum.amount += BigInt(a.amount_subunits);
            sum.recorded++;
          } else if (status !== 200) sum.other++;
        },
      },
    ];
  };
  /**
   * One row, with the service's CPU per request (user + system of its process, every thread): on a shared
   * machine the throughput swings with the neighbours' load, the CPU a request costs much less.
   */
  type Row = Figures & { cpuMs: number };
  type Measured = Row & { window: Window; cpuSeconds: number };
  const ac = async (requests?: autocannon.Request[], seconds = duration, amount?: number): Promise<Measured> => {
    const c0 = cpuSeconds(pid);
    const f = await cannon({
      url: requests ? svc.url : `${svc.url}/v1/me`,
      headers,
      duration: seconds,
      amount,
      connections: concurrency,
      requests,
    });
    const cpu = cpuSeconds(pid) - c0;
    return { ...f, cpuSeconds: cpu, cpuMs: (cpu * 1000) / Math.max(1, f.window.totalCompletedRequests) };
  };
  /**
   * A goal's row and its baseline, measured in `rounds` turns of `roundSeconds` each (the baseline first in
   * even rounds, second in odd ones): this machine's speed drifts within a run (the same code measured 0.37
   * and 0.60 × in back-to-back runs of one window each), so each round compares two windows seconds apart.
   * Each row sums its rounds (requests, CPU, every request's latency); `spread` is the rounds' own
   * throughput ratios, lowest and highest.
   */
  const paired = async (subject: (round: number) => autocannon.Request[], baseline: autocannon.Request[] | undefined) => {
    const sum = (rows: Measured[]): Row => {
      const f = mergeWindows(rows.map((r) => r.window));
      const requests = rows.reduce((n, r) => n + r.window.totalCompletedRequests, 0);
      return { ...f, cpuMs: (rows.reduce((n, r) => n + r.cpuSeconds, 0) * 1000) / Math.max(1, requests) };
    };
    const subjects: Measured[] = [];
    const bases: Measured[] = [];
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) bases.push(await ac(baseline, roundSeconds));
      subjects.push(await ac(subject(round), roundSeconds));
      if (round % 2 === 1) bases.push(await ac(baseline, roundSeconds));
    }
    const ratios = subjects.map((r, k) => r.rps / bases[k].rps).sort((a, b) => a - b);
    return { subject: sum(subjects), base: sum(bases), spread: `rounds ${ratios[0].toFixed(2)}–${ratios[ratios.length - 1].toFixed(2)} ×` };
  };
  /** a whole paid request per connection turn: the challenge, the agent's spend that pays it, the redeem */
  const paidRequests = (label: string, sum: { settled: number }): autocannon.Request[] => {
    let k = 0;
    type Ctx = { i?: number; challenge?: string; payTo?: string; proof?: string };
    return [
      {
        method: 'POST',
        path: '/v1/x402/challenges',
        headers,
        setupRequest: (req, context) => {
          const c = context as Ctx;
          c.i = k++;
          return {
            ...req,
            body: JSON.stringify(challengeOf(`/${label}/${c.i}`)),
          };
        },
        onResponse: (status, body, context) => {
          if (status !== 201) return;
          const r = JSON.parse(body) as { challenge_id: string; challenge: { payTo: string } };
          Object.assign(context, { challenge: r.challenge_id, payTo: r.challenge.payTo });
        },
      },
      {
        method: 'POST',
        headers,
        setupRequest: (req, context) => {
          const c = context as Ctx;
          if (!c.challenge) return undefined as never; // the challenge failed: start the sequence again
          return {
            ...req,
            path: spendPath(agents[1 + (c.i! % 9)].id),
            body: JSON.stringify(spendAttempt(c.payTo!, { reference: c.challenge }, '10000')),
          };
        },
        onResponse: (status, body, context) => {
          if (status === 201) (context as Ctx).proof = (JSON.parse(body) as { spend_reference?: string }).spend_reference;
        },
      },
      {
        method: 'POST',
        path: '/v1/x402/redeem',
        headers,
        setupRequest: (req, context) => {
          const c = context as Ctx;
          if (!c.proof) return undefined as never;
          return { ...req, body: JSON.stringify({ proof: c.proof, resource: `/${label}/${c.i}` }) };
        },
        onResponse: (status, body) => {
          if (status === 200 && (JSON.parse(body) as { status: string }).status === 'settled') sum.settled++;
        },
      },
    ];
  };
  const meThrice: autocannon.Request[] = [0, 1, 2].map(() => ({ method: 'GET', path: '/v1/me', headers }));
  /**
   * A paid request's three steps, each alone at `concurrency` connections right after a `GET /v1/me` window
   * of as many requests: `stepRequests` challenges, then spends that pay them (over the nine wallets, as in
   * the paid row), then the redeems of their proofs. Where a paid sequence's time goes, step by step (each
   * step's CPU per request against `GET /v1/me`'s); a spend here decides more attempts per actor turn than
   * inside the paid sequence, where a third of the connections spend at a time.
   */
  const paidSteps = async () => {
    const issued: Array<{ id: string; payTo: string; resource: string }> = [];
    const proofs: Array<{ proof: string; resource: string }> = [];
    let asked = 0;
    let paying = 0;
    let redeeming = 0;
    type Ctx = { resource?: string };
    const challenges: autocannon.Request[] = [
      {
        method: 'POST',
        path: '/v1/x402/challenges',
        headers,
        setupRequest: (req, context) => {
          const resource = ((context as Ctx).resource = `/step/${asked++}`);
          return {
            ...req,
            body: JSON.stringify(challengeOf(resource)),
          };
        },
        onResponse: (status, body, context) => {
          if (status !== 201) return;
          const r = JSON.parse(body) as { challenge_id: string; challenge: { payTo: string } };
          issued.push({ id: r.challenge_id, payTo: r.challenge.payTo, resource: (context as Ctx).resource! });
        },
      },
    ];
    const spends: autocannon.Request[] = [
      {
        method: 'POST',
        headers,
        setupRequest: (req, context) => {
          const c = issued[paying++];
          (context as Ctx).resource = c.resource;
          return {
            ...req,
            path: spendPath(agents[1 + (paying % 9)].id),
            body: JSON.stringify(spendAttempt(c.payTo, { reference: c.id }, '10000')),
          };
        },
        onResponse: (status, body, context) => {
          if (status === 201)
            proofs.push({ proof: (JSON.parse(body) as { spend_reference: string }).spend_reference, resource: (context as Ctx).resource! });
        },
      },
    ];
    const redeems: autocannon.Request[] = [
      {
        method: 'POST',
        path: '/v1/x402/redeem',
        headers,
        setupRequest: (req) => ({ ...req, body: JSON.stringify(proofs[redeeming++]) }),
      },
    ];
    const out: Array<{ name: string; step: Measured; base: Measured }> = [];
    const step = async (name: string, requests: autocannon.Request[], n: number) => {
      // nothing to send (every challenge or spend before it refused): autocannon would run `duration` instead
      if (n === 0) throw new Error(`${name}: the step before it left nothing to send`);
      const base = await ac(undefined, duration, n);
      out.push({ name, base, step: await ac(requests, duration, n) });
    };
    await step(`POST /v1/x402/challenges alone, ${stepRequests} (a paid request's first step)`, challenges, stepRequests);
    await step('POST …/spend-attempts paying them, 9 wallets (its second)', spends, issued.length);
    await step('POST /v1/x402/redeem of their proofs (its third)', redeems, proofs.length);
    return out;
  };
  const cannonRow = (name: string, f: Row, base: Row, per = 1) =>
    lines.push(
      `| ${name} | ${Math.round(f.rps / per)}/s | ${(f.rps / base.rps).toFixed(2)} | ${(f.cpuMs * 1000).toFixed(0)} µs | ` +
        `${(base.cpuMs / f.cpuMs).toFixed(2)} | ${f.p50} ms | ${f.p99} ms | ${f.non2xx + f.errors} |`,
    );

  /**
   * Gives the wallet's windows what a spend in each minute of the last day leaves (written into its actor's
   * state in the service's store, as the actor writes it: the actor's next write finds a newer version,
   * reloads it and decides again).
   */
  const aDayOfSpends = async (walletId: string) => {
    const store = await openStore(`sqlite:${join(svc.dataDir, 'service.db')}`);
    try {
      const state = (await store.get<{ id: string; version: number; buckets?: object[] }>('agent_wallet_states', walletId))!;
      const minute = Date.now() - (Date.now() % 60_000);
      const day = Array.from({ length: DAY_BUCKETS }, (_, k) => {
        const at = minute - (DAY_BUCKETS - k) * 60_000;
        return { rail: RAIL, minute: at, last_at: at + 30_000, amount: '1000', count: 1 };
      });
      await store.write([
        { op: 'cas', coll: 'agent_wallet_states', doc: { ...state, buckets: [...day, ...(state.buckets ?? [])] }, expected: state.version },
      ]);
    } finally {
      await store.close();
    }
  };
  /** the sum of every attempt the service recorded on a wallet, as its API lists them (every page) */
  const listedSpent = async (walletId: string) => {
    let sum = 0n;
    for (let cursor: string | null = null; ;) {
      const page: { data: Array<{ status: string; amount_subunits: string }>; next_cursor: string | null } = await call(
        'GET',
        `/v1/agent-wallets/${walletId}/spend-attempts?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      for (const a of page.data) if (a.status === 'pending') sum += BigInt(a.amount_subunits);
      if (!(cursor = page.next_cursor)) return sum;
    }
  };
  // autocannon stops at its deadline with requests still in flight: they finish before anything is counted
  const settle = () => new Promise((r) => setTimeout(r, 3000));

  // a warm-up at full load too: the first baseline, measured right after the light warm-up above, ran on a
  // cold process (JIT tiers and heap sizing at 50 connections) at about half the rate of the second one,
  // which flattered the first row's ratio
  await ac();
  await ac(
    spendRequests(
      agents.slice(1).map((a) => a.id),
      tally(),
    ),
  );
  const one = tally();
  await settle();
  const before = await holding(agents[0].id);
  const listedBefore = await listedSpent(agents[0].id);
  const onePair = await paired(() => spendRequests([agents[0].id], one), undefined);
  const { subject: oneWallet, base } = onePair;
  await settle();
  const after = await holding(agents[0].id);
  const lost = before - after;
  const recorded = (await listedSpent(agents[0].id)) - listedBefore;
  // over the wallet's whole life too: what it was funded with, less what it holds, is every attempt recorded
  const lifeLost = funded[0] - after;
  const listed = listedBefore + recorded;
  const ten = tally();
  const baseTen = await ac();
  const tenWallets = await ac(
    spendRequests(
      agents.map((a) => a.id),
      ten,
    ),
  );
  const evaluated = await ac(
    spendRequests(
      agents.map((a) => a.id),
      tally(),
      (id) => `${spendPath(id)}/evaluate`,
    ),
  );
  const settledFlows = { settled: 0 };
  const paidPair = await paired((round) => paidRequests(`paid${round}`, settledFlows), meThrice);
  const { subject: paidFlows, base: baseThree } = paidPair;
  const steps = await paidSteps();
  /**
   * A busy wallet: one that spent in every minute of its longest window (24 h) holds 1,439 minute buckets
   * besides the current one; its windows are given that history as a day of spends leaves it. Its row runs
   * last (after the event streams' idle measure): its state, rewritten each turn, is ~150 KB of WAL a turn,
   * which the checkpointer's thread copies for seconds after the load. Its lines join the HTTP table.
   */
  const busyRow = async () => {
    const [busy] = (await fundedAgentWallets(call, 1, POLICY)).agents;
    await call('POST', spendPath(busy.id), spendAttempt(settlement.address));
    await aDayOfSpends(busy.id);
    const baseBusy = await ac();
    const busyWallet = await ac(spendRequests([busy.id], tally()));
    const at = lines.length;
    cannonRow('GET /v1/me (baseline, again)', baseBusy, baseBusy);
    cannonRow(`POST …/spend-attempts, one wallet with a day of spends (${DAY_BUCKETS} minute buckets)`, busyWallet, baseBusy);
    lines.splice(httpTableEnd, 0, ...lines.splice(at));
  };
  const loadAfterHttp = load1();
  cannonRow('GET /v1/me (baseline)', base, base);
  cannonRow('POST …/spend-attempts, one wallet (settled in the ledger)', oneWallet, base);
  cannonRow('GET /v1/me (baseline, again)', baseTen, baseTen);
  cannonRow('POST …/spend-attempts, 10 wallets', tenWallets, baseTen);
  cannonRow('POST …/spend-attempts/evaluate, 10 wallets', evaluated, baseTen);
  cannonRow('three GET /v1/me in a row (baseline of a paid request; per sequence)', baseThree, baseThree, 3);
  cannonRow('paid x402 request: challenge → agent spend → redeem (per sequence)', paidFlows, baseThree, 3);
  // a run of so many requests ends on autocannon's one-second tick: its rate is coarse, its CPU per request is
  // not. One window of GET /v1/me swings (102-175 µs within a run), so each step is compared with the three
  // windows taken together
  const stepBase = steps.reduce((n, x) => n + x.base.cpuSeconds, 0) / steps.reduce((n, x) => n + x.base.window.totalCompletedRequests, 0);
  lines.push(
    `| GET /v1/me (baseline of the steps below: the three windows before them together) | – | – | ${(stepBase * 1e6).toFixed(0)} µs | 1.00 | – | – | ` +
      `${steps.reduce((n, x) => n + x.base.non2xx + x.base.errors, 0)} |`,
  );
  for (const { name, step } of steps)
    lines.push(
      `| ${name} | – | – | ${(step.cpuMs * 1000).toFixed(0)} µs | ${(stepBase / (step.cpuMs / 1000)).toFixed(2)} | ${step.p50} ms | ${step.p99} ms | ` +
        `${step.non2xx + step.errors} |`,
    );
  const httpTableEnd = lines.length;
  const oneRatio = oneWallet.rps / base.rps;
  const oneErrors = oneWallet.non2xx + oneWallet.errors + one.other;
  const exact = lost === recorded && lifeLost === listed;
  goals.push({
    goal: 'spend attempts, one wallet: ≥ 0.5 × GET /v1/me, p99 ≤ 50 ms, 0 errors, exact',
    measured:
      `${Math.round(oneWallet.rps)}/s (${oneRatio.toFixed(2)} ×, ${onePair.spread}; by CPU per request ${(base.cpuMs / oneWallet.cpuMs).toFixed(2)} ×), p99 ${oneWallet.p99} ms, ${oneErrors} errors; ` +
      `exact: the row's loss ${lost} = attempts recorded ${recorded} (${one.recorded} answered before the deadline); ` +
      `the wallet's life: lost ${lifeLost} = attempts listed ${listed}`,
    baseline: `GET /v1/me ${Math.round(base.rps)}/s, p99 ${base.p99} ms`,
    met: oneRatio >= 0.5 && oneWallet.p99 <= 50 && oneErrors === 0 && exact,
  });
  const paidRatio = paidFlows.rps / baseThree.rps;
  const paidErrors = paidFlows.non2xx + paidFlows.errors;
  goals.push({
    goal: 'paid x402 request (challenge, spend, redeem): ≥ 0.5 × three GET /v1/me',
    measured: `${Math.round(paidFlows.rps / 3)}/s (${paidRatio.toFixed(2)} ×, ${paidPair.spread}; by CPU per request ${(baseThree.cpuMs / paidFlows.cpuMs).toFixed(2)} ×), ${settledFlows.settled} settled, ${paidErrors} errors`,
    baseline: `${Math.round(baseThree.rps / 3)}/s`,
    met: paidRatio >= 0.5 && paidErrors === 0,
  });

  if (!quick) {
    // redeem latency, one at a time
    /** `one` timed `n` times, one at a time; `prepare` (not timed) makes what it sends */
    const timeEach = async <P = number>(n: number, one: (p: P) => Promise<unknown>, prepare?: (i: number) => Promise<P>) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const p = prepare ? await prepare(i) : (i as P);
        const t0 = performance.now();
        await one(p);
        ms.push(performance.now() - t0);
      }
      return ms.sort((a, b) => a - b);
    };
    const agent = agents[1];
    const agentProofs: Array<{ proof: string; resource: string }> = [];
    for (let i = 0; i < redeems; i++) {
      const c = await challenge(i, 'agent');
      const a = await call('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, paying(c));
      agentProofs.push({ proof: a.spend_reference, resource: `/agent/${i}` });
    }
    const outside = Wallet.createRandom();
    await usdc.mint(outside.address, 1_000_000_000_000n);
    const first = await challenge(0, 'warm');
    await (await chain.wallet(0).sendTransaction({ to: first.fee_payer, value: parseEther('100') })).wait();
    const sign = async (c: { challenge: Parameters<typeof signEip3009Proof>[1] }) =>
      signEip3009Proof(outside, c.challenge, {
        chainId: chain.chainId,
        tokenName: 'Test USD Coin',
        tokenVersion: '2',
        validForSeconds: 3600,
      });
    const eipProofs: Array<{ proof: string; resource: string }> = [];
    for (let i = 0; i < redeems; i++) eipProofs.push({ proof: await sign(await challenge(i, 'eip')), resource: `/eip/${i}` });
    // the bare baseline: the same transferWithAuthorization sent by a plain ethers client, then its receipt
    // paying an address outside the service: paid to the merchant's wallet behind the service's back, it
    // would be money the books never saw there (a reconciliation drift, a P1 alert, in every run)
    const bareProofs: string[] = [];
    const elsewhere = Wallet.createRandom().address;
    for (let i = 0; i < redeems; i++) {
      const c = await challenge(i, 'bare');
      bareProofs.push(await sign({ challenge: { ...c.challenge, payTo: elsewhere } }));
    }
    const payer = chain.wallet(2);
    const agentMs = await timeEach(redeems, (i) => call('POST', '/v1/x402/redeem', agentProofs[i]));
    const eipShares: number[] = [];
    const eipWait: number[] = [];
    const eipMs = await timeEach(redeems, async (i) => {
      const t0 = performance.now();
      await call('POST', '/v1/x402/redeem', eipProofs[i]);
      const t1 = performance.now();
      const waited = rpc.waited(t0, t1);
      eipWait.push(waited);
      eipShares.push(t1 - t0 - waited);
    });
    eipShares.sort((a, b) => a - b);
    eipWait.sort((a, b) => a - b);
    const chainMs = await timeEach(redeems, async (i) => {
      const { payload } = JSON.parse(Buffer.from(bareProofs[i], 'base64').toString('utf8'));
      const intent = eip3009Intent('testnet', usdc.address, payload.authorization, payload.signature) as { data: string };
      const tx = await payer.sendTransaction({ to: usdc.address, data: intent.data });
      if (!(await chain.receipt(tx.hash))) throw new Error('automine did not mine the transaction');
    });
    // the ecosystem's client: an x402 v2 PaymentPayload with a random EIP-3009 nonce, each signed right
    // before it is sent (its authorization is valid for the requirements' short timeout only)
    const evm = new ExactEvmScheme(privateKeyToAccount(outside.privateKey as `0x${string}`));
    const v2Ms = await timeEach(
      redeems,
      (proof: { proof: string; resource: string }) => call('POST', '/v1/x402/redeem', proof),
      async (i) => {
        const c = await challenge(i, 'v2');
        const accepted = c.payment_required.accepts[0];
        const p = await evm.createPaymentPayload(2, accepted);
        return {
          proof: encodeHeader({ x402Version: 2, resource: c.payment_required.resource, accepted, payload: p.payload }),
          resource: `/v2/${i}`,
        };
      },
    );
    const facFailures: string[] = [];
    const facMs = await timeEach(
      redeems,
      async (settlement: object) => {
        const r = await call('POST', '/v1/x402/facilitator/settle', settlement);
        // reported, not fatal: this row is x402 v2's, the goals of this benchmark do not depend on it
        if (!r.success) facFailures.push(String(r.errorMessage ?? r.errorReason));
      },
      async (i) => {
        const c = await challenge(i, 'fac');
        // the facilitator is handed requirements of the resource server's own (no challenge of ours)
        const { challengeId: _id, ...extra } = c.payment_required.accepts[0].extra;
        const requirements = { ...c.payment_required.accepts[0], extra };
        const p = await evm.createPaymentPayload(2, requirements);
        return {
          x402Version: 2,
          paymentPayload: { x402Version: 2, accepted: requirements, payload: p.payload },
          paymentRequirements: requirements,
        };
      },
    );
    const share = percentile(eipShares, 50);
    lines.push(
      '',
      `POST /v1/x402/redeem, ${redeems} one at a time: agent-wallet proof p50 ${percentile(agentMs, 50).toFixed(1)} ms, p99 ${percentile(agentMs, 99).toFixed(1)} ms;`,
      `EIP-3009 p50 ${percentile(eipMs, 50).toFixed(1)} ms, p99 ${percentile(eipMs, 99).toFixed(1)} ms; bare ethers send + receipt p50 ${percentile(chainMs, 50).toFixed(1)} ms`,
      `x402 v2 PAYMENT-SIGNATURE from @x402/evm p50 ${percentile(v2Ms, 50).toFixed(1)} ms, p99 ${percentile(v2Ms, 99).toFixed(1)} ms;` +
        ` POST /v1/x402/facilitator/settle p50 ${percentile(facMs, 50).toFixed(1)} ms, p99 ${percentile(facMs, 99).toFixed(1)} ms` +
        (facFailures.length ? ` (${facFailures.length} of ${redeems} not settled: ${facFailures[0]})` : ''),
    );
    goals.push({
      goal: "EIP-3009 redeem on a local chain: the service's own share p50 ≤ 20 ms",
      measured: `${share.toFixed(1)} ms, p99 ${percentile(eipShares, 99).toFixed(1)} ms (redeem p50 ${percentile(eipMs, 50).toFixed(1)} ms, of it waiting on the chain's RPC p50 ${percentile(eipWait, 50).toFixed(1)} ms)`,
      baseline: `a bare ethers client's send + receipt p50 ${percentile(chainMs, 50).toFixed(1)} ms`,
      met: share <= 20,
    });

    // sessions against a bare node:http server (autocannon), each right after its bare twin
    const createBody = JSON.stringify({
      amount: 12.5,
      expires_in: '1h',
      paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
      metadata: { order: 'bench' },
    });
    const created = await call('POST', '/v1/payment_sessions', JSON.parse(createBody));
    await cannon({
      url: `${svc.url}/v1/payment_sessions`,
      method: 'POST',
      headers,
      body: createBody,
      duration: 2,
      connections: concurrency,
    });
    const bareCreate = await cannon({
      url: `${bare.url}/v1/payment_sessions`,
      method: 'POST',
      headers,
      body: createBody,
      duration,
      connections: 50,
    });
    const create = await cannon({
      url: `${svc.url}/v1/payment_sessions`,
      method: 'POST',
      headers,
      body: createBody,
      duration,
      connections: 50,
    });
    const readPath = `/v1/payment_sessions/${created.session_id}`;
    const bareRead = await cannon({ url: `${bare.url}${readPath}`, headers, duration, connections: 50 });
    const read = await cannon({ url: `${svc.url}${readPath}`, headers, duration, connections: 50 });
    let sessions = create.ok + 3;
    const cr = create.rps / bareCreate.rps;
    const rr = read.rps / bareRead.rps;
    lines.push(
      '',
      `autocannon, 50 connections, ${duration} s each: POST /v1/payment_sessions ${create.rps.toFixed(0)}/s p99 ${create.p99} ms (bare ${bareCreate.rps.toFixed(0)}/s);` +
        ` GET /v1/payment_sessions/{id} ${read.rps.toFixed(0)}/s p99 ${read.p99} ms (bare ${bareRead.rps.toFixed(0)}/s)`,
    );
    goals.push({
      goal: 'session create ≥ 0.4 × bare node:http',
      measured: `${create.rps.toFixed(0)}/s (${cr.toFixed(2)} ×), p99 ${create.p99} ms`,
      baseline: `${bareCreate.rps.toFixed(0)}/s`,
      met: cr >= 0.4,
    });
    goals.push({
      goal: 'session read ≥ 0.5 × bare node:http',
      measured: `${read.rps.toFixed(0)}/s (${rr.toFixed(2)} ×), p99 ${read.p99} ms`,
      baseline: `${bareRead.rps.toFixed(0)}/s`,
      met: rr >= 0.5,
    });

    // event streams: idle cost of open streams, then commit → event on a stream while they stay open
    const idleCpu = async (seconds: number) => {
      const c0 = cpuSeconds(pid);
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return (cpuSeconds(pid) - c0) / seconds;
    };
    /**
     * Waits (at most 3 minutes) until the service has been quiet for two 2 s windows in a row (< 3 % of a
     * core): after the rows above it refills its pool of deposit addresses (key derivation in a worker,
     * 6–30 % of a core in bursts for a minute or more), which would land in one window or the other.
     */
    const settleCpu = async () => {
      let calm = 0;
      for (let k = 0; k < 90 && calm < 2; k++) calm = (await idleCpu(2)) < 0.03 ? calm + 1 : 0;
      return calm >= 2;
    };
    /**
     * The median of ten 2 s windows: the service's own periodic work (scanners, the rate refresh, the pool's
     * refills) comes in bursts of a second or two, which a single 10 s window caught or missed by chance
     */
    const steadyCpu = async () => {
      const w: number[] = [];
      for (let k = 0; k < 10; k++) w.push(await idleCpu(2));
      return percentile(
        w.sort((a, b) => a - b),
        50,
      );
    };
    const settledQuiet = await settleCpu();
    const quiet = await steadyCpu();
    const streams: http.ClientRequest[] = [];
    const arrivals = new Map<string, number>();
    const { port } = new URL(svc.url);
    const openStream = (onEvent?: (id: string) => void) =>
      new Promise<void>((resolve, reject) => {
        const req = http.get(
          { host: '127.0.0.1', port, path: '/v1/events/stream', agent: false, headers: { 'X-API-Key': reg.api_key } },
          (res) => {
            if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
            if (!onEvent) {
              // an idle stream's bytes are dropped undecoded: this process reads 1,000 sockets per event too,
              // on the same two cores, and decoding each into a string it never looks at delayed the last one
              res.resume();
              resolve();
              return;
            }
            res.setEncoding('utf8');
            let buf = '';
            res.on('data', (chunk: string) => {
              buf += chunk;
              let k;
              while ((k = buf.indexOf('\n\n')) >= 0) {
                const frame = buf.slice(0, k);
                buf = buf.slice(k + 2);
                const data = /^data: (.*)$/m.exec(frame);
                if (data) onEvent(JSON.parse(data[1]).id);
              }
            });
            resolve();
          },
        );
        req.on('error', reject);
        streams.push(req);
      });
    for (let i = 0; i < streamCount; i += 50) await Promise.all(Array.from({ length: Math.min(50, streamCount - i) }, () => openStream()));
    const settledOpen = await settleCpu();
    const open = await steadyCpu();
    const streamCpu = Math.max(0, open - quiet) * 100;
    await openStream((id) => arrivals.set(id, Date.now()));
    await new Promise((r) => setTimeout(r, 500));
    const store = await openStore(`sqlite:${join(svc.dataDir, 'service.db')}`);
    const eventLatency: number[] = [];
    for (let i = 0; i < 200; i++) {
      const s = await call('POST', '/v1/payment_sessions', JSON.parse(createBody));
      await call('POST', `/v1/payment_sessions/${s.session_id}/simulate`);
      sessions++;
      const [ev] = await store.find<{ id: string; created_at: string }>('webhook_events', { session_id: s.session_id });
      const deadline = Date.now() + 10_000;
      while (!arrivals.has(ev.id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      eventLatency.push((arrivals.get(ev.id) ?? Infinity) - Date.parse(ev.created_at));
      await new Promise((r) => setTimeout(r, 5));
    }
    await store.close();
    for (const s of streams) s.destroy();
    eventLatency.sort((a, b) => a - b);
    const ep99 = percentile(eventLatency, 99);
    goals.push({
      goal: `${streamCount} open idle event streams < 2% of a core`,
      measured: `${streamCpu.toFixed(2)}% of a core (the median of ten 2 s windows, open against quiet)`,
      baseline: `the idle process: ${(quiet * 100).toFixed(2)}%${settledQuiet && settledOpen ? '' : ' (the service never went quiet for 4 s before a window)'}`,
      met: streamCpu < 2,
    });
    goals.push({
      goal: 'commit → event on a stream p99 ≤ 50 ms',
      measured: `p50 ${percentile(eventLatency, 50).toFixed(0)} ms, p99 ${ep99.toFixed(0)} ms (${streamCount} streams open)`,
      baseline: '–',
      met: ep99 <= 50,
    });

    // for information: this run's own service carries every row's load (far more than the goal's), so it is not the goal's figure
    await new Promise((r) => setTimeout(r, 5000));
    lines.push(
      '',
      `RSS of this run's service after all its rows: ${rssMb(pid).toFixed(0)} MB (${rssStart.toFixed(0)} MB after start; ${sessions} sessions, ${spends} spends, ${streamCount} event streams, x402 traffic)`,
    );
    lines.push('', `load average after the HTTP rows ${loadAfterHttp}, after the streams ${load1()}`);
  } else lines.push('', `load average after the HTTP rows ${loadAfterHttp}`);
  await busyRow();
} finally {
  await svc.stop();
  await chain.stop();
  bare.stop();
  rpc.stop();
}

if (!quick) {
  // ledger transfers against raw writes of the same rows, alone on the machine's share (bench:ledger)
  const ledger = execFileSync(process.execPath, ['scripts/bench-ledger.ts', '--transfers', String(transfers)], { encoding: 'utf8' });
  const ratio = (re: RegExp) => Number(re.exec(ledger)?.[1] ?? NaN);
  const rate = (label: string) => new RegExp(`${label}[^\\n]*?(\\d+)/s`).exec(ledger)?.[1] ?? '?';
  const ledgerRatio = ratio(/ratio sequential\/same rows ([\d.]+)/);
  goals.push({
    goal: 'ledger transfers ≥ 0.8 × raw store writes of the same rows',
    measured:
      `${rate('ledger: transferOps')}/s (${ledgerRatio.toFixed(2)} ×;` +
      ` ${ratio(/sequential\/baseline ([\d.]+)/).toFixed(2)} × skeletal rows of the same ids, ${rate('baseline: raw')}/s)`,
    baseline: `the ledger's own rows written raw ${rate("baseline: the ledger's own rows")}/s`,
    met: ledgerRatio >= 0.8,
  });
}

if (!quick) {
  // the memory goal in a fresh node, started as npm start starts it, with exactly the goal's load and nothing else (bench:memory)
  const m = await measureMemory({ sessions: 10_000, spends: 10_000, settle: memorySettle, cold: false });
  const [first, second] = m.idleAfter;
  goals.push({
    goal: 'idle RSS of npm start ≤ 150 MB after start, ≤ 200 MB after 10,000 sessions and 10,000 spends (a fresh node, that load only)',
    measured:
      `${m.idleStart.mb.toFixed(0)} MB idle ${memorySettle} s after start; ${second.mb.toFixed(0)} MB idle ${2 * memorySettle} s after the load` +
      ` (${m.rightAfter.mb.toFixed(0)} MB right after it, ${first.mb.toFixed(0)} MB at ${memorySettle} s: the node gives memory back once idle 40 s;` +
      ` ${m.sessionErrors + m.spendErrors} errors)`,
    baseline: `a bare node process ${m.bare.toFixed(0)} MB`,
    met: m.idleStart.mb <= 150 && second.mb <= 200 && m.sessionErrors + m.spendErrors === 0,
  });
}

console.log(
  `\npure rule evaluation (lib/spend/policy.ts, 200 per-minute spend buckets in the windows): ${Math.round(evaluations).toLocaleString('en')} evaluations/s`,
);
console.log(
  `\nHTTP, autocannon, ${concurrency} connections, embedded default (one process, SQLite): the one-wallet spend and paid rows in ${rounds} rounds of ${roundSeconds} s with their baselines in turn (summed), the others ${duration} s each after their baseline:`,
);
console.log(
  '| request | throughput | vs baseline | service CPU per request | vs baseline (CPU) | p50 | p99 | errors |\n|---|---|---|---|---|---|---|---|',
);
for (const l of lines) console.log(l);
console.log(`\nGoals (load average now ${load1()}):\n| goal | measured | baseline (same run) | met |\n|---|---|---|---|`);
for (const g of goals) console.log(`| ${g.goal} | ${g.measured} | ${g.baseline} | ${g.met ? 'yes' : 'NO'} |`);
