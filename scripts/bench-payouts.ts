/**
 * `npm run bench:payouts`: payout and refund latency from request to `completed` on a local chain.
 *
 * A local Hardhat node (automine: a transaction is in a block when eth_sendRawTransaction returns) with
 * TestUSDC; the service in this process (SQLite) with ETHEREUM_TESTNET_CONFIRMATIONS=1. A sandbox merchant
 * is paid 1,000 USDC and 1 ETH on chain; once swept and available, N sequential payouts of each token go to
 * fresh addresses, each timed from the POST /v1/payouts request to the first GET that answers
 * `completed` (polled every 5 ms), started at random points of the scan cycle, for each
 * BROADCAST_POLL_INTERVAL_MS given. Every payout is one chain transaction of the wallet's own (it pays its
 * gas from its ETH: docs/money-out.md "Who pays network fees").
 * Then N refunds of each paid session (POST /v1/payment_sessions/{id}/refunds, no destination: back to
 * the address that paid, which the service checks on chain first), timed the same way. Each timed payout
 * and refund is checked against the chain afterwards, and the wallet's books against its address at the end.
 * Baseline in the same run: the same transfer sent bare with ethers from a funded key and its receipt
 * read (what the chain itself costs).
 *
 * Environment: BENCH_N (payouts per token and interval, default 20), BENCH_INTERVALS (default 100,1000).
 */
import { Contract, Wallet } from 'ethers';
import { api, startTestNode } from '../test/helpers/node.ts';
import { registerMerchant } from '../test/helpers/merchant.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';
import { gasWalletRef } from '../lib/treasury/gas-wallet.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../test/harness/hardhat-node.ts';
import { percentile } from './bench-lib.ts';

const N = Number(process.env.BENCH_N ?? 20);
const INTERVALS = (process.env.BENCH_INTERVALS ?? '100,1000').split(',').map(Number);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;

interface Row {
  label: string;
  p50: number;
  p95: number;
  mean: number;
}
const stats = (label: string, xs: number[]): Row => {
  const s = [...xs].sort((a, b) => a - b);
  return { label, p50: percentile(s, 50), p95: percentile(s, 95), mean: s.reduce((a, b) => a + b, 0) / s.length };
};

async function until<T>(what: string, f: () => Promise<T | null | undefined | false>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(5);
  }
}

interface Timings {
  eth: number[];
  usdc: number[];
  refundEth: number[];
  refundUsdc: number[];
}

/** what `address` holds of `token` on the chain */
const balanceOn = (chain: HardhatNode, usdc: TestUsdc) => (token: string, address: string) =>
  token === 'USDC' ? usdc.balanceOf(address) : chain.provider.getBalance(address);

/**
 * A timed payout or refund is only a number if it did what it says: one transaction from the merchant's
 * wallet, exactly the amount more at the destination, and `fee_subunits` exactly what the chain took.
 */
function checker(chain: HardhatNode, usdc: TestUsdc) {
  const balance = balanceOn(chain, usdc);
  return async (x: any, from: string, destinationBefore: bigint): Promise<void> => {
    const fail = (what: string) => {
      throw new Error(`${x.id}: ${what}`);
    };
    const [tx, receipt] = await Promise.all([chain.provider.getTransaction(x.tx_hash), chain.receipt(x.tx_hash)]);
    if (!tx || !receipt || receipt.status !== 1) fail(`transaction ${x.tx_hash} is not a successful one on chain`);
    if (tx!.from !== from) fail(`sent from ${tx!.from}, not from its wallet ${from}`);
    const arrived = (await balance(x.token, x.destination)) - destinationBefore;
    if (arrived !== BigInt(x.amount_subunits)) fail(`${arrived} arrived, not ${x.amount_subunits}`);
    const burnt = receipt!.gasUsed * receipt!.gasPrice;
    if (BigInt(x.fee_subunits) !== burnt) fail(`fee_subunits ${x.fee_subunits}, but the chain took ${burnt}`);
  };
}

async function service(chain: HardhatNode, usdc: TestUsdc, pollMs: number): Promise<Timings> {
  const t = await startTestNode({
    LOG_LEVEL: 'error',
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    CHAIN_POLL_INTERVAL_MS: String(pollMs),
    BROADCAST_POLL_INTERVAL_MS: String(pollMs),
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  const balance = balanceOn(chain, usdc);
  const checkOnChain = checker(chain, usdc);
  try {
    const base = t.url;
    // the helper waits for the code the mail outbox sends a moment after the request
    const merchant = await registerMerchant(t, { name: 'Bench', email: `bench${Date.now()}@bench.test` });
    await t.call('operators.setRateLimit', { merchant_id: merchant.id, rate_limit_per_minute: 100000 });
    const key = merchant.apiKey;
    await chain.setBalance(new KeyDeriver(loadSeedPhrase(t.dataDir, {}).phrase).address(gasWalletRef('ethereum', 'testnet')), 10n ** 20n);

    // money in: one USDC session, one ETH session, paid, swept, available
    const rail = (token: string) => ({ methodID: 0, chain: 'ethereum', network: 'testnet', token });
    const su = await api(base, 'POST', '/v1/payment_sessions', { amount: 1000, expires_in: '1h', paymentMethod: rail('USDC') }, key);
    const se = await api(base, 'POST', '/v1/payment_sessions', { amount: 1, expires_in: '1h', paymentMethod: rail('ETH') }, key);
    await usdc.transfer(3, su.address, 1_000_000_000n);
    await chain.sendEth(3, se.address, 10n ** 18n);
    const wallet = await until('the deposits to be swept', async () => {
      const w = (await api(base, 'GET', '/v1/wallets', undefined, key)).data[0];
      const b = (t: string) => w?.balances.find((x: any) => x.token === t);
      return w &&
        b('USDC')?.available_subunits === '1000000000' &&
        b('ETH')?.pending_subunits === '0' &&
        b('ETH')?.available_subunits !== '0'
        ? w
        : null;
    });

    /**
     * N requests of `token` to `destination()` made by `create`, each timed until the resource at `path(id)`
     * answers completed, then checked on chain
     */
    const run = async (
      token: string,
      destination: () => string,
      create: (destination: string) => Promise<{ id: string }>,
      path: (id: string) => string,
    ) => {
      const out: number[] = [];
      for (let i = 0; i < N; i++) {
        const to = destination();
        const before = await balance(token, to);
        await sleep(Math.random() * pollMs); // a random point of the scanners' cycle
        const t0 = performance.now();
        const p = await create(to);
        const done = await until(`${p.id}`, async () => {
          const x = await api(base, 'GET', path(p.id), undefined, key);
          if (x.status === 'failed') throw new Error(`${p.id} failed: ${x.failure_reason}`);
          return x.status === 'completed' ? x : null;
        });
        out.push(performance.now() - t0);
        await checkOnChain(done, wallet.address, before);
      }
      return out;
    };
    const payout = (token: 'USDC' | 'ETH', amount_subunits: string) =>
      run(
        token,
        () => Wallet.createRandom().address,
        (destination) => api(base, 'POST', '/v1/payouts', { wallet_id: wallet.id, amount_subunits, token, destination }, key),
        (id) => `/v1/payouts/${id}`,
      );
    // no destination in the request: back to the address that paid (account 3)
    const refund = (token: 'USDC' | 'ETH', sessionId: string, amount_subunits: string) =>
      run(
        token,
        () => chain.accounts[3]!.address,
        () => api(base, 'POST', `/v1/payment_sessions/${sessionId}/refunds`, { amount_subunits }, key),
        (id) => `/v1/payment_sessions/${sessionId}/refunds/${id}`,
      );
    const times = {
      usdc: await payout('USDC', '1000000'),
      eth: await payout('ETH', '1000000000000000'),
      refundUsdc: await refund('USDC', su.session_id, '1000000'),
      refundEth: await refund('ETH', se.session_id, '1000000000000000'),
    };
    // the wallet's books still match its address: what it holds in the ledger is what the chain holds there
    const after = (await api(base, 'GET', `/v1/wallets/${wallet.id}`, undefined, key)).balances;
    for (const token of ['ETH', 'USDC']) {
      const b = after.find((x: any) => x.token === token);
      const onChain = await balance(token, wallet.address);
      if (BigInt(b.available_subunits) + BigInt(b.pending_subunits) !== onChain)
        throw new Error(`wallet ${token}: ledger ${b.available_subunits} + ${b.pending_subunits} pending, chain ${onChain}`);
    }
    return times;
  } finally {
    await t.stop();
  }
}

async function bare(chain: HardhatNode, usdc: TestUsdc): Promise<{ eth: number[]; usdc: number[] }> {
  const from = chain.wallet(4);
  const token = new Contract(usdc.address, ['function transfer(address to, uint256 amount) returns (bool)'], from);
  await usdc.mint(from.address, 1_000_000_000n);
  const eth: number[] = [];
  const tok: number[] = [];
  for (let i = 0; i < N; i++) {
    let t0 = performance.now();
    const a = await from.sendTransaction({ to: Wallet.createRandom().address, value: 10n ** 15n });
    await a.wait(1);
    eth.push(performance.now() - t0);
    t0 = performance.now();
    const b = await token.getFunction('transfer')(Wallet.createRandom().address, 1_000_000n);
    await b.wait(1);
    tok.push(performance.now() - t0);
  }
  return { eth, usdc: tok };
}

const chain = await startHardhatNode();
try {
  const usdc = await chain.deployTestUsdc();
  await usdc.mint(chain.accounts[3]!.address, 10_000_000_000n);
  const baseline = await bare(chain, usdc);
  const rows: Row[] = [stats('bare ethers transfer, ETH', baseline.eth), stats('bare ethers transfer, USDC', baseline.usdc)];
  for (const ms of INTERVALS) {
    const r = await service(chain, usdc, ms);
    rows.push(
      stats(`payout ETH, poll ${ms} ms`, r.eth),
      stats(`payout USDC, poll ${ms} ms`, r.usdc),
      stats(`refund ETH, poll ${ms} ms`, r.refundEth),
      stats(`refund USDC, poll ${ms} ms`, r.refundUsdc),
    );
  }
  const ref = (label: string) =>
    rows.find((x) => x.label === (label.includes('USDC') ? 'bare ethers transfer, USDC' : 'bare ethers transfer, ETH'))!.p50;
  console.log(`\npayout and refund latency, request → completed (N=${N} each, Hardhat automine, depth 1)\n`);
  console.log('| case | p50 | p95 | mean | p50 vs bare |');
  console.log('|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.label} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.mean)} | ${r.label.startsWith('bare') ? '1×' : `${(r.p50 / ref(r.label)).toFixed(1)}×`} |`,
    );
} finally {
  await chain.stop();
}
