/**
 * Settlement from real chain deposits (a local Hardhat node with TestUSDC): a session paid on chain
 * credits the merchant's default wallet `pending` (the money is still at the deposit address), exactly
 * once, with the paying tx on the wallet transaction; pending money cannot be paid out (409); a reorg
 * voids the credit and the transaction mined again credits it anew; the payout.completed webhook of a
 * payout arrives signed; the ledger check passes throughout.
 */
import { Transaction, Wallet } from 'ethers';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { RAILS, createSession, sessionWhen, until } from './chain-listener-helpers.ts';

jest.setTimeout(180_000);

describe('settlement of on-chain deposits (Hardhat)', () => {
  let chain: HardhatNode;
  let usdc: TestUsdc;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;

  beforeAll(async () => {
    chain = await startHardhatNode();
    usdc = await chain.deployTestUsdc();
    await usdc.mint(chain.accounts[1]!.address, 1_000_000_000n);
    rx = await startReceiver();
    t = await startTestNode({
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '100',
      WEBHOOK_SCAN_INTERVAL_MS: '100',
    });
    m = await merchant(t, { webhook_url: rx.url });
  });

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await chain?.stop();
  });

  const defaultWallet = async () => {
    const list = (await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data as any[];
    return list.find((w) => w.is_default && w.chain === 'ethereum');
  };
  const usdcOf = (w: any) => w?.balances.find((b: any) => b.token === 'USDC');
  const txsOf = async (id: string) => (await t.request('GET', `/v1/wallets/${id}/transactions`, { key: m.apiKey })).body.data as any[];
  const ledgerOk = async () => expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true, problems: [] });

  it('an on-chain payment settles pending into the default wallet; a reorg voids it; mined again it settles anew', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 8);
    const snap = await chain.snapshot();
    const { receipt } = await usdc.transfer(1, s.address, 8_000_000n);
    const raw = Transaction.from((await chain.provider.getTransaction(receipt!.hash))!).serialized;
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');

    const w = await until('the default wallet', defaultWallet);
    expect(usdcOf(w)).toMatchObject({ available: 0, available_subunits: '0', pending: 8, pending_subunits: '8000000' });
    expect(await txsOf(w.id)).toEqual([
      expect.objectContaining({
        type: 'settlement',
        status: 'pending',
        amount: 8,
        amount_subunits: '8000000',
        token: 'USDC',
        session_id: s.session_id,
        tx_hash: receipt!.hash,
        simulated: false,
      }),
    ]);
    // pending money is not available: a payout of it is refused
    const po = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: w.id, amount: 1, token: 'USDC', destination: chain.accounts[2]!.address },
    });
    expect(po.status).toBe(409);
    expect(po.body.message).toMatch(/^insufficient available balance: 0 USDC available .*\(8 more pending\)/);
    await ledgerOk();

    // the block with the payment leaves the chain
    expect(await chain.revert(snap)).toBe(true);
    await chain.sendEth(6, Wallet.createRandom().address, 1n);
    await chain.mine(2);
    await sessionWhen(t, m, s.session_id, 'the revert', (x) => x.status === 'pending');
    const reverted = await defaultWallet();
    expect(usdcOf(reverted)).toMatchObject({ available: 0, pending: 0, pending_subunits: '0' });
    expect(await txsOf(w.id)).toEqual([expect.objectContaining({ type: 'settlement', status: 'voided', tx_hash: receipt!.hash })]);
    await ledgerOk();

    // the same signed transaction lands on the new branch: counted again, settled again (once)
    await chain.rpc<string>('eth_sendRawTransaction', [raw]);
    await sessionWhen(t, m, s.session_id, 'completion again', (x) => x.status === 'completed');
    const again = await until('the new credit', async () => {
      const x = await defaultWallet();
      return usdcOf(x).pending_subunits === '8000000' && x;
    });
    expect(usdcOf(again)).toMatchObject({ available: 0, pending: 8 });
    const txs = await txsOf(w.id);
    expect(txs.map((x) => [x.type, x.status])).toEqual([
      ['settlement', 'pending'],
      ['settlement', 'voided'],
    ]);
    expect((await t.request('GET', '/v1/wallets', { key: m.apiKey })).body.data.filter((x: any) => x.is_default)).toHaveLength(1);
    await ledgerOk();
  });

  it('a payout.completed webhook arrives signed, with the payout body', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 20);
    expect((await t.request('POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    const w = await defaultWallet();
    expect(usdcOf(w).available).toBe(20);
    const dest = chain.accounts[3]!.address;
    const po = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: w.id, amount: 12.5, token: 'USDC', destination: dest },
    });
    expect(po.status).toBe(201);
    expect(po.body).toMatchObject({ status: 'completed', execution: 'simulated', simulated: true });
    const hook = await until('the payout webhook', () => rx.received.find((r) => r.headers['x-service-event'] === 'payout.completed'));
    expect(verifyWebhook(hook.raw, String(hook.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    expect(JSON.parse(hook.raw)).toEqual({
      event_type: 'payout.completed',
      payout_id: po.body.id,
      status: 'completed',
      amount: 12.5,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      timestamp: expect.stringMatching(/^\d+$/),
      tx_hash: null,
    });
    const audit = await until('the delivery audit', async () => {
      const rows = await t.node.rt.store.find<any>('audit_events', { event_id: hook.eventId });
      return rows.length > 0 && rows;
    });
    expect(audit[0]).toMatchObject({ type: 'payout.webhook.delivered', payout_id: po.body.id, merchant_id: m.id });
    // simulated money never reached the chain
    expect(await usdc.balanceOf(dest)).toBe(0n);
    await ledgerOk();
  });
});
