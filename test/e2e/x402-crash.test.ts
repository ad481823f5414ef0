/**
 * A redeem under a SIGKILL: the node (a real `node index.ts` child) is killed while the EIP-3009 settlement
 * it broadcast waits to be mined. A new node over the same DATA_DIR finishes it: the same proof is then
 * served once, a replay is refused, and the money moved once on chain and once in the ledger.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { Wallet, parseEther } from 'ethers';
import { startTestNode, tempDir, http } from '../helpers/node.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { spawnNode as spawnChildNode } from '../helpers/child-node.ts';
import { eventually } from '../helpers/wait.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { signEip3009Proof } from '../../lib/x402/payer.ts';

interface Child {
  proc: ChildProcess;
  url: string;
}

let chain: HardhatNode;
let usdc: TestUsdc;
let dataDir: string;
let db: TestDatabase;
let m: RegisteredMerchant;
const children: Child[] = [];

/** A real `node index.ts` on the shared data dir and the local chain (test/helpers/child-node.ts). */
async function spawnNode(env: Record<string, string>): Promise<Child> {
  const child = await spawnChildNode({
    DATA_DIR: dataDir,
    STORE_URL: db.url,
    LOG_LEVEL: 'warn',
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    CHAIN_POLL_INTERVAL_MS: '60000',
    BROADCAST_POLL_INTERVAL_MS: '200',
    AGENTS_SCAN_INTERVAL_MS: '200',
    ...env,
  });
  children.push(child);
  return child;
}

function kill(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return resolve();
    child.proc.once('exit', () => resolve());
    child.proc.kill('SIGKILL');
  });
}

beforeAll(async () => {
  chain = await startHardhatNode();
  usdc = await chain.deployTestUsdc();
  dataDir = tempDir('x402-crash-');
  db = await freshDatabase('x402_crash');
  const t = await startTestNode({ DATA_DIR: dataDir, STORE_URL: db.url });
  try {
    m = await registerMerchant(t);
  } finally {
    await t.stop();
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map(kill));
  await chain?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('a redeem killed mid-settlement is consumed exactly once after a restart', async () => {
  const first = await spawnNode({ X402_SETTLE_TIMEOUT_MS: '120000' });
  const c = await http(first.url, 'POST', '/v1/x402/challenges', {
    key: m.apiKey,
    body: { resource: '/data', amount_subunits: '3000000', paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' } },
  });
  expect(c.status).toBe(201);
  const outside = Wallet.createRandom();
  await usdc.mint(outside.address, 5_000_000n);
  await (await chain.wallet(0).sendTransaction({ to: c.body.fee_payer, value: parseEther('5') })).wait();
  const block = await chain.provider.getBlock('latest');
  const proof = await signEip3009Proof(outside, c.body.challenge, {
    chainId: chain.chainId,
    tokenName: 'Test USD Coin',
    tokenVersion: '2',
    nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
  });

  await chain.setAutomine(false);
  const inflight = http(first.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/data' } }).catch((e: Error) => e);
  const store: Store = await openStore(db.url);
  try {
    // the settlement is signed, persisted and sent; the node waits for it to be mined, and dies
    await eventually(
      'the settlement to be broadcast',
      async () => (await store.get<{ id: string; status: string }>('chain_txs', `x402:${c.body.challenge_id}`))?.status === 'sent',
      60_000,
      50,
    );
  } finally {
    await store.close();
  }
  await kill(first);
  // the client got no answer (the connection died with the node)
  expect((await inflight) as { status?: number }).not.toHaveProperty('status');
  await chain.mine(1);
  await chain.setAutomine(true);

  const second = await spawnNode({ X402_SETTLE_TIMEOUT_MS: '20000' });
  const served = await http(second.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/data' } });
  expect(served.status).toBe(200);
  expect(served.body).toMatchObject({
    status: 'settled',
    challenge_id: c.body.challenge_id,
    payer: outside.address,
    amount_subunits: '3000000',
  });
  const again = await http(second.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/data' } });
  expect(again.status).toBe(402);
  expect(again.body.message).toMatch(/^already_redeemed/);
  expect(await usdc.balanceOf(c.body.challenge.payTo)).toBe(3_000_000n);
  expect(await usdc.balanceOf(outside.address)).toBe(2_000_000n);
  const wallets = await http(second.url, 'GET', '/v1/wallets?limit=100', { key: m.apiKey });
  const w = wallets.body.data.find((x: { address: string }) => x.address === c.body.challenge.payTo);
  const tx = await http(second.url, 'GET', `/v1/wallets/${w.id}/transactions?limit=100`, { key: m.apiKey });
  expect(tx.body.data).toHaveLength(1);
  expect(tx.body.data[0]).toMatchObject({ amount_subunits: '3000000', status: 'posted' });
}, 180_000);

it('a settlement slower than the wait answers 202 pending (never a new 402); the same proof is served once it lands', async () => {
  const node = await spawnNode({ X402_SETTLE_TIMEOUT_MS: '300' });
  const c = await http(node.url, 'POST', '/v1/x402/challenges', {
    key: m.apiKey,
    body: { resource: '/slow', amount_subunits: '1000000', paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' } },
  });
  const outside = Wallet.createRandom();
  await usdc.mint(outside.address, 1_000_000n);
  const block = await chain.provider.getBlock('latest');
  const proof = await signEip3009Proof(outside, c.body.challenge, {
    chainId: chain.chainId,
    tokenName: 'Test USD Coin',
    tokenVersion: '2',
    nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
  });
  await chain.setAutomine(false);
  try {
    const pending = await http(node.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/slow' } });
    expect(pending.status).toBe(202);
    expect(pending.body).toMatchObject({ status: 'pending', challenge_id: c.body.challenge_id, settled_at: null });
    expect((await http(node.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/slow' } })).status).toBe(202);
    await chain.mine(1);
  } finally {
    await chain.setAutomine(true);
  }
  const served = await eventually(
    'the same proof to be served',
    async () => {
      const r = await http(node.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/slow' } });
      return r.status === 200 ? r : r.status === 202 ? null : Promise.reject(new Error(`${r.status} ${r.text}`));
    },
    30_000,
    100,
  );
  expect(served.body.status).toBe('settled');
  expect((await http(node.url, 'POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/slow' } })).status).toBe(402);
  expect(await usdc.balanceOf(outside.address)).toBe(0n);
}, 120_000);
