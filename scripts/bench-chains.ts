/**
 * `npm run bench:chains`: what the chain listeners cost.
 *
 * 1. Latency: the time from a paying transaction's inclusion (a local Hardhat chain with automine: the
 *    block exists when eth_sendRawTransaction returns) to the signed `payment_session.completed` webhook's
 *    arrival at the merchant's receiver, at depth 1 (ETHEREUM_TESTNET_CONFIRMATIONS=1), over N sequential
 *    payments started at random points of the poll cycle, for each CHAIN_POLL_INTERVAL_MS given. The
 *    service runs in this process (SQLite store), the chain in a child process.
 * 2. Listener cost as live sessions grow: 1k, 10k and 100k session documents seeded directly into a SQLite
 *    store in batches (created over the last day, expiring in the future); then, with the listener classes
 *    themselves (no broker; deliveries acknowledged at once):
 *    - Ethereum: the address book's full load (time, heap), an idle pass (no new block), and a pass over
 *      10 new blocks each holding 6 USDC transfers (one to a session address);
 *    - Solana (LiteSVM RPC harness, in this process): a first pass (token-account derivation, cursor
 *      reads) and a steady pass, each asking every watched address and its USDC account for new
 *      signatures (JSON-RPC batches of 100).
 *
 * Environment: BENCH_N (payments per interval, default 40), BENCH_INTERVALS (default 250,1000),
 * ETH_SIZES (default 100,1000,10000,100000), SOLANA_SIZES (default 1000,10000,100000).
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Contract, getAddress, hexlify } from 'ethers';
import { PublicKey } from '@solana/web3.js';
import { loadConfig } from '../config/index.ts';
import { startNode } from '../app.ts';
import { api, CapturingMailer } from '../test/helpers/node.ts';
import { solvePow } from '../lib/onboarding/pow.ts';
import { openStore, type Store, type WriteOp } from '../lib/store/index.ts';
import { SessionAddressBook, sessionIdAt } from '../lib/chains/address-book.ts';
import { DepositInbox } from '../lib/chains/deposit-inbox.ts';
import { EthereumRailListener } from '../lib/chains/ethereum/listener.ts';
import { SolanaRailListener } from '../lib/chains/solana/listener.ts';
import type { SessionReply } from '../lib/sessions/payment-session.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../test/harness/hardhat-node.ts';
import { startSolanaRpc } from '../test/harness/solana-rpc.ts';

const N = Number(process.env.BENCH_N ?? 40);
const INTERVALS = (process.env.BENCH_INTERVALS ?? '250,1000').split(',').map(Number);
const ETH_SIZES = (process.env.ETH_SIZES ?? '100,1000,10000,100000').split(',').map(Number);
const SOL_SIZES = (process.env.SOLANA_SIZES ?? '1000,10000,100000').split(',').filter(Boolean).map(Number);

const quiet = { info: () => undefined, warn: (...a: unknown[]) => console.warn(...a), error: (...a: unknown[]) => console.error(...a) };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(x < 10 ? 1 : 0)} ms`;
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function heap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}
const heapText = (bytes: number) => (bytes < 1048576 ? '< 1 MB' : `${(bytes / 1048576).toFixed(1)} MB`);

// ---------------------------------------------------------------------------------------------------
// 1. inclusion → webhook latency
// ---------------------------------------------------------------------------------------------------

async function latency(chain: HardhatNode, usdc: TestUsdc, pollMs: number): Promise<number[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-chains-'));
  const mailer = new CapturingMailer();
  const node = await startNode(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      POW_DIFFICULTY: '8',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: String(pollMs),
      RATE_LIMIT_PER_MINUTE: '100000',
    }),
    { mailer, defaultMetrics: false },
  );
  const arrivals = new Map<string, number>();
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const t = performance.now();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (body.event_type === 'payment_session.completed' && !arrivals.has(body.session_id)) arrivals.set(body.session_id, t);
      } catch {
        /* not ours */
      }
      res.writeHead(200).end();
    });
  });
  try {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const port = (node.broker.getLocalService('api') as unknown as { server: { address(): AddressInfo } }).server.address().port;
    const base = `http://127.0.0.1:${port}`;
    const email = `bench${Date.now()}@bench.test`;
    await node.broker.call('operators.trustDomain', { value: 'bench.test' });
    const intent = await api(base, 'POST', '/v1/merchants/email-verification', { email });
    const code = await mailer.waitForCode(email);
    await api(base, 'POST', '/v1/merchants/email-verification/confirm', { registration_intent_id: intent.registration_intent_id, code });
    const pow = await api(base, 'POST', '/v1/merchants/registration-proof-of-work', {
      registration_intent_id: intent.registration_intent_id,
    });
    const merchant = await api(base, 'POST', '/v1/merchants', {
      name: 'Bench',
      sandbox: true,
      registration_intent_id: intent.registration_intent_id,
      webhook_url: hookUrl,
      ...(pow.required
        ? { proof_of_work_challenge_id: pow.challenge_id, proof_of_work_nonce: solvePow(pow.challenge, pow.difficulty) }
        : {}),
    });
    await node.broker.call('operators.setRateLimit', { merchant_id: merchant.id, rate_limit_per_minute: 100000 });
    const buyer = chain.wallet(7);
    const token = new Contract(usdc.address, ['function transfer(address to, uint256 amount) returns (bool)'], buyer);
    const out: number[] = [];
    for (let i = 0; i < N; i++) {
      const s = await api(
        base,
        'POST',
        '/v1/payment_sessions',
        {
          amount: 1,
          expires_in: '15m',
          paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' },
        },
        merchant.api_key,
      );
      await sleep(Math.random() * pollMs); // a random point of the poll cycle
      await token.getFunction('transfer')(s.address, 1_000_000n);
      const included = performance.now(); // automine: the block holds it once the send returned
      const deadline = Date.now() + 60_000;
      while (!arrivals.has(s.session_id)) {
        if (Date.now() > deadline) throw new Error(`no webhook for ${s.session_id}`);
        await sleep(2);
      }
      out.push(arrivals.get(s.session_id)! - included);
    }
    return out.sort((a, b) => a - b);
  } finally {
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(() => r(undefined)));
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// 2. listener cost as the number of live sessions grows
// ---------------------------------------------------------------------------------------------------

const ackAll = async (): Promise<SessionReply> => ({
  session: {} as SessionReply['session'],
  events: [],
  changed: true,
  credit: 'credited',
});

/** Seeds `count` session documents (shaped like the real ones) created over the last day, live for a week. */
async function seedSessions(store: Store, chain: 'ethereum' | 'solana', count: number, address: (i: number) => string): Promise<string[]> {
  const now = Date.now();
  const addresses: string[] = [];
  const batch = 1000;
  for (let i = 0; i < count; i += batch) {
    const ops: WriteOp[] = [];
    for (let j = i; j < Math.min(count, i + batch); j++) {
      const created = now - 3_600_000 - Math.floor(((count - j) / count) * 86_400_000);
      const a = address(j);
      addresses.push(a);
      const at = new Date(created).toISOString();
      ops.push({
        op: 'insert',
        coll: 'payment_sessions',
        doc: {
          id: `${sessionIdAt(created)}${randomBytes(8).toString('hex')}`,
          merchant_id: 'mer_bench',
          demo: false,
          sandbox: true,
          environment: 'sandbox',
          method_id: 0,
          chain,
          network: 'testnet',
          token: 'USDC',
          decimals: 6,
          expected_subunits: '1000000',
          received_subunits: '0',
          address: a,
          address_index: j,
          key_fingerprint: 'bench',
          status: 'pending',
          metadata: { order: `bench-${j}` },
          expires_at: new Date(created + 7 * 86_400_000).toISOString(),
          expiry_due_at: new Date(created + 7 * 86_400_000).toISOString(),
          completed_at: null,
          expired_at: null,
          created_at: at,
          updated_at: at,
          deposits: [],
          events: [],
        },
      });
    }
    await store.write(ops);
  }
  return addresses;
}

interface EthCost {
  size: number;
  seedS: number;
  loadMs: number;
  heapBytes: number;
  idleMs: number;
  busyMs: number;
  blocks: number;
  deposits: number;
}

async function ethCost(chain: HardhatNode, usdc: TestUsdc, size: number): Promise<EthCost> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-eth-cost-'));
  const store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
  try {
    const t0 = performance.now();
    const addresses = await seedSessions(store, 'ethereum', size, () => getAddress(hexlify(randomBytes(20))));
    const seedS = (performance.now() - t0) / 1000;
    const book = new SessionAddressBook(store, 'ethereum', { keepAfterExpiryMs: 30 * 86_400_000 });
    const inbox = new DepositInbox(store, { send: ackAll, log: quiet });
    const listener = new EthereumRailListener({
      network: 'testnet',
      rpcUrl: chain.url,
      usdcAddress: usdc.address,
      confirmations: 1,
      store,
      book,
      inbox,
      log: quiet,
      startLookback: 0,
    });
    const h0 = heap();
    const l0 = performance.now();
    await book.refresh();
    const loadMs = performance.now() - l0;
    const heapBytes = heap() - h0;
    await listener.pass(); // the cursor starts at the head
    const i0 = performance.now();
    await listener.pass();
    const idleMs = performance.now() - i0;
    // 10 blocks, each with 5 transfers elsewhere and one to a session address
    const payer = chain.wallet(8);
    for (let b = 0; b < 10; b++) {
      const to = [
        ...Array.from({ length: 5 }, () => getAddress(hexlify(randomBytes(20)))),
        addresses[Math.floor(Math.random() * addresses.length)]!,
      ];
      await usdc.transferBatch(
        payer,
        to,
        to.map(() => 1_000n),
      );
    }
    const b0 = performance.now();
    const stats = await listener.pass();
    const busyMs = performance.now() - b0;
    listener.close();
    return { size, seedS, loadMs, heapBytes, idleMs, busyMs, blocks: stats.blocks, deposits: stats.deposits };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface SolCost {
  size: number;
  loadMs: number;
  heapBytes: number;
  firstS: number;
  steadyS: number;
  rpcPerPass: number;
}

async function solCost(size: number): Promise<SolCost> {
  const sol = await startSolanaRpc();
  const mint = await sol.createMint();
  const dir = mkdtempSync(join(tmpdir(), 'bench-sol-cost-'));
  const store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
  try {
    await seedSessions(store, 'solana', size, () => new PublicKey(randomBytes(32)).toBase58());
    const book = new SessionAddressBook(store, 'solana', { keepAfterExpiryMs: 86_400_000 });
    const inbox = new DepositInbox(store, { send: ackAll, log: quiet });
    const listener = new SolanaRailListener({
      network: 'testnet',
      rpcUrl: sol.url,
      usdcMint: mint.mint,
      commitment: 'confirmed',
      store,
      book,
      inbox,
      log: quiet,
    });
    const h0 = heap();
    const l0 = performance.now();
    await book.refresh();
    const loadMs = performance.now() - l0;
    const heapBytes = heap() - h0;
    const f0 = performance.now();
    const first = await listener.pass();
    const firstS = (performance.now() - f0) / 1000;
    if (first.failed) console.warn(`  ${first.failed} addresses failed in the first pass`);
    const s0 = performance.now();
    await listener.pass();
    const steadyS = (performance.now() - s0) / 1000;
    return { size, loadMs, heapBytes, firstS, steadyS, rpcPerPass: first.polled * 2 };
  } finally {
    await store.close();
    await sol.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------

const chain = await startHardhatNode();
try {
  const usdc = await chain.deployTestUsdc();
  for (const i of [7, 8]) await usdc.mint(chain.accounts[i]!.address, 10n ** 15n);
  console.log(`# chain listeners benchmark (node ${process.version}, ${(await import('node:os')).cpus().length} CPUs)\n`);
  console.log(`## inclusion → completed webhook, Ethereum USDC at depth 1, ${N} payments per poll interval\n`);
  console.log('| CHAIN_POLL_INTERVAL_MS | p50 | p99 | mean | max |');
  console.log('|---|---|---|---|---|');
  for (const interval of INTERVALS) {
    const lat = await latency(chain, usdc, interval);
    const mean = lat.reduce((a, b) => a + b, 0) / lat.length;
    console.log(`| ${interval} | ${ms(pct(lat, 50))} | ${ms(pct(lat, 99))} | ${ms(mean)} | ${ms(lat.at(-1)!)} |`);
  }

  console.log('\n## Ethereum listener cost by live sessions\n');
  console.log('| sessions | address book full load | its heap | idle pass | pass over 10 blocks × 6 transfers | deposits found |');
  console.log('|---|---|---|---|---|---|');
  for (const size of ETH_SIZES) {
    const c = await ethCost(chain, usdc, size);
    console.log(
      `| ${size.toLocaleString('en')} | ${ms(c.loadMs)} | ${heapText(c.heapBytes)} | ${ms(c.idleMs)} | ${ms(c.busyMs)} | ${c.deposits} |`,
    );
  }

  if (SOL_SIZES.length) {
    console.log('\n## Solana listener cost by live sessions (LiteSVM RPC harness in this process)\n');
    console.log('| sessions | address book full load | its heap | first pass | steady pass | getSignaturesForAddress calls per pass |');
    console.log('|---|---|---|---|---|---|');
    for (const size of SOL_SIZES) {
      const c = await solCost(size);
      console.log(
        `| ${size.toLocaleString('en')} | ${ms(c.loadMs)} | ${heapText(c.heapBytes)} | ${c.firstS.toFixed(2)} s | ${c.steadyS.toFixed(2)} s | ${c.rpcPerPass.toLocaleString('en')} |`,
      );
    }
  }
  console.log(`\nprocess peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}`);
} finally {
  await chain.stop();
}
process.exit(0);
