/**
 * Benchmark of agent spends and x402 on the embedded default (`node index.ts` as a child process, SQLite)
 * with a local Hardhat chain:
 *  - spend-attempt evaluation: the pure rules in process; POST …/spend-attempts/evaluate and POST
 *    …/spend-attempts (recorded and reserved) over HTTP at 50 concurrent clients spread over 10 agent
 *    wallets and on one wallet (its actor decides one at a time), against the bare baseline of the same
 *    run: GET /v1/me (authentication, rate limit and routing only);
 *  - redeem latency: an agent-wallet proof (ledger only), an EIP-3009 authorization on the spec's wire and
 *    one signed by the unmodified @x402/evm client (x402 v2 PaymentPayload, random nonce), each a gas wallet
 *    transaction mined at once by Hardhat, one at a time, through POST /v1/x402/redeem; and the same v2
 *    payment settled through the facilitator (POST /v1/x402/facilitator/settle).
 * Usage: npx node scripts/bench-agents.ts [--requests 3000 --concurrency 50 --redeems 100]
 */
import { execFileSync } from 'node:child_process';
import { Wallet, parseEther } from 'ethers';
import { load, percentile, startServiceProcess } from './bench-lib.ts';
import { startHardhatNode } from '../test/harness/hardhat-node.ts';
import { evaluate, parsePolicy } from '../lib/spend/policy.ts';
import { signEip3009Proof } from '../lib/x402/payer.ts';
import { encodeHeader } from '../lib/x402/challenge.ts';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const requests = arg('requests', 3000);
const concurrency = arg('concurrency', 50);
const redeems = arg('redeems', 100);
const RAIL = 'ethereum:testnet:USDC';
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

const chain = await startHardhatNode();
const usdc = await chain.deployTestUsdc();
const svc = await startServiceProcess({
  TRUSTED_EMAIL_DOMAINS: 'bench.example',
  ETHEREUM_TESTNET_RPC_URL: chain.url,
  ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
  ETHEREUM_TESTNET_CONFIRMATIONS: '1',
  CHAIN_POLL_INTERVAL_MS: '60000',
});
try {
  const operator = (...args: string[]) =>
    execFileSync(process.execPath, ['scripts/operator.ts', ...args], { env: svc.env, encoding: 'utf8' });
  const { bearer_token } = JSON.parse(operator('create-user', 'agents@bench.example'));
  const reg = (await (
    await fetch(`${svc.url}/v1/merchants`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${bearer_token}` },
      body: JSON.stringify({ name: 'Bench', sandbox: true }),
    })
  ).json()) as { id: string; api_key: string };
  operator('set-rate-limit', reg.id, '100000000');
  const headers = { 'Content-Type': 'application/json', 'X-API-Key': reg.api_key };
  const call = async (method: string, path: string, body?: unknown) => {
    const send = () => fetch(`${svc.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    // a kept-alive socket the server closed while the set-up was idle: the request never arrived, send again
    const r = await send().catch((e: { cause?: { code?: string } }) => (e.cause?.code === 'UND_ERR_SOCKET' ? send() : Promise.reject(e)));
    const json = (await r.json()) as any;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };

  // ten funded agent wallets with a policy (sandbox money: a simulated session, then a payout into each)
  const session = await call('POST', '/v1/payment_sessions', {
    amount: 900,
    expires_in: '1h',
    paymentMethod: { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' },
  });
  await call('POST', `/v1/payment_sessions/${session.session_id}/simulate`);
  const settlement = (await call('GET', '/v1/wallets?limit=100')).data.find((w: { is_default: boolean }) => w.is_default);
  const agents: Array<{ id: string; address: string }> = [];
  for (let i = 0; i < 10; i++) {
    const w = await call('POST', '/v1/wallets', { type: 'agent', chain: 'ethereum', network: 'testnet' });
    await call('POST', '/v1/payouts', { wallet_id: settlement.id, token: 'USDC', destination: w.address, amount_subunits: '80000000' });
    await call('PUT', `/v1/agent-wallets/${w.id}/policy`, POLICY);
    agents.push(w);
  }
  const targets = Array.from({ length: 50 }, () => Wallet.createRandom().address);
  const body = (i: number) =>
    JSON.stringify({
      target: targets[i % 50],
      amount: 0.01,
      amount_subunits: '10000',
      token_symbol: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
    });
  const post = (path: (i: number) => string) => async (i: number) =>
    (await fetch(`${svc.url}${path(i)}`, { method: 'POST', headers, body: body(i) })).status;
  const me = async () => (await fetch(`${svc.url}/v1/me`, { headers })).status;

  await load(300, 10, me);
  await load(
    300,
    10,
    post((i) => `/v1/agent-wallets/${agents[i % 10].id}/spend-attempts/evaluate`),
  );
  const rows: Array<[string, Awaited<ReturnType<typeof load>>]> = [];
  rows.push(['GET /v1/me (baseline)', await load(requests, concurrency, me)]);
  rows.push([
    'POST …/spend-attempts/evaluate, 10 wallets',
    await load(
      requests,
      concurrency,
      post((i) => `/v1/agent-wallets/${agents[i % 10].id}/spend-attempts/evaluate`),
    ),
  ]);
  rows.push([
    'POST …/spend-attempts (recorded, reserved), 10 wallets',
    await load(
      requests,
      concurrency,
      post((i) => `/v1/agent-wallets/${agents[i % 10].id}/spend-attempts`),
    ),
  ]);
  rows.push([
    'POST …/spend-attempts, one wallet',
    await load(
      Math.min(requests, 1500),
      concurrency,
      post(() => `/v1/agent-wallets/${agents[0].id}/spend-attempts`),
    ),
  ]);
  const base = rows[0][1].perSecond;
  console.log(
    `pure rule evaluation (lib/spend/policy.ts, 200 per-minute spend buckets in the windows): ${Math.round(pure()).toLocaleString('en')} evaluations/s`,
  );
  console.log(`\nHTTP, ${requests} requests per run, ${concurrency} concurrent clients, embedded default (one process, SQLite):`);
  console.log('| request | throughput | vs baseline | p50 | p99 | errors |\n|---|---|---|---|---|---|');
  for (const [name, r] of rows) {
    console.log(
      `| ${name} | ${Math.round(r.perSecond)} req/s | ${(r.perSecond / base).toFixed(2)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.errors} |`,
    );
  }

  // redeem latency, one at a time
  const agent = agents[1];
  const latency = async (label: string, one: (i: number) => Promise<void>) => {
    const ms: number[] = [];
    for (let i = 0; i < redeems; i++) {
      const t0 = performance.now();
      await one(i);
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    console.log(`| ${label} | ${percentile(ms, 50).toFixed(1)} ms | ${percentile(ms, 99).toFixed(1)} ms |`);
  };
  const challenge = (i: number, label: string) =>
    call('POST', '/v1/x402/challenges', {
      resource: `/${label}/${i}`,
      amount_subunits: '10000',
      paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
    });
  const agentProofs: Array<{ proof: string; resource: string }> = [];
  for (let i = 0; i < redeems; i++) {
    const c = await challenge(i, 'agent');
    const a = await call('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
      target: c.challenge.payTo,
      amount: 0.01,
      amount_subunits: '10000',
      token_symbol: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      reference: c.challenge_id,
    });
    agentProofs.push({ proof: a.spend_reference, resource: `/agent/${i}` });
  }
  const outside = Wallet.createRandom();
  await usdc.mint(outside.address, 1_000_000_000n);
  const first = await challenge(0, 'warm');
  await (await chain.wallet(0).sendTransaction({ to: first.fee_payer, value: parseEther('100') })).wait();
  const eipProofs: Array<{ proof: string; resource: string }> = [];
  for (let i = 0; i < redeems; i++) {
    const c = await challenge(i, 'eip');
    eipProofs.push({
      proof: await signEip3009Proof(outside, c.challenge, {
        chainId: chain.chainId,
        tokenName: 'Test USD Coin',
        tokenVersion: '2',
        validForSeconds: 3600,
      }),
      resource: `/eip/${i}`,
    });
  }
  // the ecosystem's client: an x402 v2 PaymentPayload with a random EIP-3009 nonce
  const v2Payer = privateKeyToAccount(outside.privateKey as `0x${string}`);
  const evm = new ExactEvmScheme(v2Payer);
  const v2Proofs: Array<{ proof: string; resource: string }> = [];
  for (let i = 0; i < redeems; i++) {
    const c = await challenge(i, 'v2');
    const accepted = c.payment_required.accepts[0];
    const p = await evm.createPaymentPayload(2, accepted);
    v2Proofs.push({
      proof: encodeHeader({ x402Version: 2, resource: c.payment_required.resource, accepted, payload: p.payload }),
      resource: `/v2/${i}`,
    });
  }
  const settlements: unknown[] = [];
  for (let i = 0; i < redeems; i++) {
    const c = await challenge(i, 'fac');
    // the facilitator is handed requirements of the resource server's own (no challenge of ours)
    const { challengeId: _id, ...extra } = c.payment_required.accepts[0].extra;
    const requirements = { ...c.payment_required.accepts[0], extra };
    const p = await evm.createPaymentPayload(2, requirements);
    settlements.push({
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: requirements, payload: p.payload },
      paymentRequirements: requirements,
    });
  }
  console.log(`\nPOST /v1/x402/redeem, ${redeems} redeems one at a time:`);
  console.log('| proof | p50 | p99 |\n|---|---|---|');
  await latency('agent wallet (ledger only)', async (i) => {
    await call('POST', '/v1/x402/redeem', agentProofs[i]);
  });
  await latency('EIP-3009 (gas wallet transaction, mined at once, depth 1)', async (i) => {
    await call('POST', '/v1/x402/redeem', eipProofs[i]);
  });
  await latency('x402 v2 PAYMENT-SIGNATURE from @x402/evm (EIP-3009, random nonce, same chain)', async (i) => {
    await call('POST', '/v1/x402/redeem', v2Proofs[i]);
  });
  await latency('POST /v1/x402/facilitator/settle, the same kind of payment', async (i) => {
    const r = await call('POST', '/v1/x402/facilitator/settle', settlements[i]);
    if (!r.success) throw new Error(`settle: ${JSON.stringify(r)}`);
  });
} finally {
  await svc.stop();
  await chain.stop();
}
