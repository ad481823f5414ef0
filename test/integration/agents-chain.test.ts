/**
 * An agent spend to an address on chain (Hardhat): approval, then execution as a payout of the agent
 * wallet through the transaction outbox; the money arrives exactly once and the ledger row is posted.
 */
import { Wallet, parseEther } from 'ethers';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { eventually } from '../helpers/wait.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { signEip3009Proof } from '../../lib/x402/payer.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { POLICY, attemptBody, balanceOf, createWallet, type WalletRef } from './agents-helpers.ts';
import { RAILS, createSession } from './chain-listener-helpers.ts';

let chain: HardhatNode;
let usdc: TestUsdc;
let t: TestNode;
let m: RegisteredMerchant;
let agent: WalletRef;
let settlement: { id: string; address: string };

beforeAll(async () => {
  chain = await startHardhatNode();
  usdc = await chain.deployTestUsdc();
  t = await startTestNode({
    ETHEREUM_TESTNET_RPC_URL: chain.url,
    ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
    ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    BROADCAST_POLL_INTERVAL_MS: '200',
    CHAIN_POLL_INTERVAL_MS: '200',
    RATE_LIMIT_PER_MINUTE: '100000',
  });
  m = await registerMerchant(t);
  // real money for the merchant: an x402 payment by an outside key lands in its settlement wallet
  const outside = Wallet.createRandom();
  await usdc.mint(outside.address, 20_000_000n);
  const c = (
    await t.request('POST', '/v1/x402/challenges', {
      key: m.apiKey,
      body: { resource: 'fund', amount_subunits: '10000000', paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' } },
    })
  ).body;
  await (await chain.wallet(0).sendTransaction({ to: c.fee_payer, value: parseEther('10') })).wait();
  const block = await chain.provider.getBlock('latest');
  const proof = await signEip3009Proof(outside, c.challenge, {
    chainId: chain.chainId,
    tokenName: 'Test USD Coin',
    tokenVersion: '2',
    nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
  });
  const redeemed = await t.request('POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: 'fund' } });
  expect(redeemed.status).toBe(200);
  // into the agent wallet: a payout to one of our wallets moves it inside the ledger at once, and a custody
  // move carries the tokens behind it to the agent's address on chain (the spend below waits for it)
  agent = await createWallet(t, m, 'agent');
  settlement = (await t.request('GET', '/v1/wallets?limit=100', { key: m.apiKey })).body.data.find(
    (w: { is_default: boolean }) => w.is_default,
  );
  const po = await t.request('POST', '/v1/payouts', {
    key: m.apiKey,
    body: { wallet_id: settlement.id, token: 'USDC', destination: agent.address, amount_subunits: '10000000' },
  });
  expect(po.status).toBeLessThan(300);
  // the agent pays its on-chain spends' gas (fee policy): the merchant pays an ETH session into its
  // settlement wallet and moves some of that ETH to the agent
  const gasSession = await createSession(t, m, RAILS.eth, 0.05);
  await (await chain.wallet(2).sendTransaction({ to: gasSession.address, value: parseEther('0.05') })).wait();
  await eventually(
    'the ETH for gas to become available',
    async () => {
      const w = (await t.request('GET', `/v1/wallets/${settlement.id}`, { key: m.apiKey })).body;
      return BigInt(w.balances.find((b: { token: string }) => b.token === 'ETH').available_subunits) > 10n ** 16n ? w : null;
    },
    90_000,
    250,
  );
  const gas = await t.request('POST', '/v1/payouts', {
    key: m.apiKey,
    body: { wallet_id: settlement.id, token: 'ETH', destination: agent.address, amount_subunits: '10000000000000000' },
  });
  expect(gas.status).toBe(201);
  await t.request('PUT', `/v1/agent-wallets/${agent.id}/policy`, { key: m.apiKey, body: POLICY });
}, 180_000);

afterAll(async () => {
  await t?.stop();
  await closeClients();
  await chain?.stop();
});

it('approval, then one on-chain transfer from the agent wallet; the pending transfer is posted', async () => {
  const target = Wallet.createRandom().address;
  expect(await balanceOf(t, m, agent.id)).toBe(10_000_000n);
  const a = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
    key: m.apiKey,
    body: attemptBody(target, 4_000_000n),
  });
  expect(a.body).toMatchObject({ status: 'approval_required', reason: 'approval_threshold' });
  const ok = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts/${a.body.id}/approve`, { key: m.apiKey });
  expect(ok.body).toMatchObject({ status: 'pending', settlement: { execution: 'chain', status: 'submitted' } });
  expect(ok.body.ledger_entry_id).toBe(ok.body.settlement.payout_id);
  expect(await balanceOf(t, m, agent.id)).toBe(6_000_000n); // reserved
  const done = await eventually(
    'the agent spend settled on chain',
    async () => {
      await t.call('money-out.scan');
      const g = await t.request('GET', `/v1/agent-wallets/${agent.id}/spend-attempts/${a.body.id}`, { key: m.apiKey });
      return g.body.settlement.status === 'settled' ? g.body : null;
    },
    60_000,
    250,
  );
  expect(done.settlement.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(await usdc.balanceOf(target)).toBe(4_000_000n);
  // more rounds change nothing: it arrived exactly once
  for (let i = 0; i < 3; i++) await t.call('money-out.scan');
  await chain.mine(2);
  expect(await usdc.balanceOf(target)).toBe(4_000_000n);
  expect(await balanceOf(t, m, agent.id)).toBe(6_000_000n);
  // the agent's address holds exactly what its ledger says: the custody move brought the 10, the spend took 4
  expect(await usdc.balanceOf(agent.address)).toBe(6_000_000n);
  const payout = await t.request('GET', `/v1/payouts/${done.settlement.payout_id}`, { key: m.apiKey });
  expect(payout.body).toMatchObject({ status: 'completed', destination: target });
});

it('a spend to one of our own wallets settles in the ledger at once; its custody move follows on chain', async () => {
  const before = await usdc.balanceOf(settlement.address);
  const agentBefore = await usdc.balanceOf(agent.address);
  const r = await t.request('POST', `/v1/agent-wallets/${agent.id}/spend-attempts`, {
    key: m.apiKey,
    body: attemptBody(settlement.address, 1_000_000n),
  });
  expect(r.body).toMatchObject({ status: 'pending', settlement: { status: 'settled', execution: 'ledger' } });
  expect(await balanceOf(t, m, agent.id)).toBe(agentBefore - 1_000_000n);
  await eventually(
    'the custody move on chain',
    async () => {
      await t.call('money-out.scan');
      return (await usdc.balanceOf(settlement.address)) === before + 1_000_000n ? true : null;
    },
    60_000,
    250,
  );
  expect(await usdc.balanceOf(agent.address)).toBe(agentBefore - 1_000_000n);
  // the move is done on chain before the engine's next pass records it (a loaded machine showed it still moving)
  const status = await eventually(
    'the custody move recorded as done',
    async () => {
      await t.call('money-out.scan');
      const s = (await t.call('money-out.status')) as { custody_moves: { moving: number } };
      return s.custody_moves.moving === 0 ? s : null;
    },
    60_000,
    250,
  );
  expect(status.custody_moves).toMatchObject({ waiting: 0, topup: 0, moving: 0, failed: 0 });
  expect(((await t.call('treasury.reconcile')) as { differences: unknown[] }).differences).toEqual([]);
});
