/**
 * Refunds end to end, through HTTP against a started node on a real Hardhat node (TestUSDC) and the
 * LiteSVM harness. A buyer pays a session from an address of their own; the merchant refunds it without
 * saying where: the money goes back to that address, exactly once, paid from the merchant's settlement
 * wallet, which is also charged the network fee (USDC and ETH on Ethereum, USDC and SOL on Solana). Ten
 * concurrent requests with one Idempotency-Key make one refund; a refund above the rest is refused; the
 * session shows refunded_amount_subunits and lists the refund; a signed refund.completed webhook arrives;
 * the ledger check stays clean and the wallets reconcile with the chain. Deposits from two addresses, from
 * a contract, or from an address that paid three other merchants too make the service ask for a destination.
 */
import { Wallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { startMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { startReceiver, type Receiver } from '../integration/webhooks-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import { getOk } from '../helpers/merchant-money.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(300_000);

describe('refunds on chain, over HTTP', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    rx = await startReceiver();
    ({ eth, usdc, sol, mint, t, stop } = await startMoneyNode({ WEBHOOK_SCAN_INTERVAL_MS: '100' }));
    m = await merchant(t, { webhook_url: rx.url });
  }, 180_000);

  afterAll(async () => {
    await stop?.();
    await rx?.close();
  });

  const get = (path: string) => getOk(t, m, path);
  const refund = (sessionId: string, body: object, headers: Record<string, string> = {}) =>
    t.request('POST', `/v1/payment_sessions/${sessionId}/refunds`, { key: m.apiKey, body, headers });
  const refundWhen = (sessionId: string, id: string) =>
    until(
      `refund ${id} final`,
      async () => {
        const r = await get(`/v1/payment_sessions/${sessionId}/refunds/${id}`);
        return r.status === 'completed' || r.status === 'failed' ? r : null;
      },
      120_000,
    );
  /** the session paid and its money swept into the settlement wallet (refundable) */
  const swept = (chain: string, token: string, atLeast: bigint) =>
    until(
      `${chain} ${token} to be swept`,
      async () => {
        const w = (await get('/v1/wallets?limit=100')).data.find((x: any) => x.chain === chain && x.is_default);
        const b = w?.balances.find((x: any) => x.token === token);
        return b && b.pending_subunits === '0' && BigInt(b.available_subunits) >= atLeast ? w : null;
      },
      120_000,
    );

  it('Ethereum: USDC and ETH go back to the buyer who paid, exactly once; one refund per Idempotency-Key; never above the rest', async () => {
    // the merchant's wallet needs ETH for the refunds' gas (the merchant pays it): an ETH sale paid by someone else
    const funding = await createSession(t, m, RAILS.eth, 0.5);
    await eth.sendEth(2, funding.address, 5n * 10n ** 17n);

    const buyer = Wallet.createRandom();
    await eth.setBalance(buyer.address, 10n ** 18n);
    await usdc.mint(buyer.address, 50_000_000n);
    const s = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(buyer, s.address, 10_000_000n);
    // an ETH session the buyer overpays: 0.08 for 0.05
    const e = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(buyer, e.address, 8n * 10n ** 16n);
    await sessionWhen(t, m, s.session_id, 'USDC completion', (x) => x.status === 'completed');
    await sessionWhen(t, m, e.session_id, 'ETH completion', (x) => x.status === 'completed');
    const w = await swept('ethereum', 'USDC', 10_000_000n);
    await swept('ethereum', 'ETH', 5n * 10n ** 17n);
    const usdcBefore = await usdc.balanceOf(buyer.address);
    const ethBefore = await eth.provider.getBalance(buyer.address);
    const walletNonce = await eth.provider.getTransactionCount(w.address);

    // ten concurrent requests with one key: one refund of 4 USDC, to the buyer without being told where
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        refund(s.session_id, { amount_subunits: '4000000', reason: 'requested_by_customer' }, { 'Idempotency-Key': 'usdc-1' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const r = answers[0]!.body;
    expect(r).toMatchObject({
      destination: buyer.address,
      destination_source: 'sender',
      execution: 'chain',
      simulated: false,
      amount_subunits: '4000000',
    });
    expect(BigInt(r.fee_subunits)).toBeGreaterThan(0n); // the quote, reserved from the wallet's ETH
    // above the rest (6 USDC left): refused, nothing changes
    const over = await refund(s.session_id, { amount_subunits: '6000001' });
    expect(over.status).toBe(409);
    expect(over.body.code).toBe(5);

    const done = await refundWhen(s.session_id, r.id);
    expect(done).toMatchObject({ status: 'completed', destination: buyer.address });
    expect(done.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdc.balanceOf(buyer.address)).toBe(usdcBefore + 4_000_000n);
    const receipt = await eth.receipt(done.tx_hash);
    expect(receipt!.from).toBe(w.address); // paid from the settlement wallet
    expect(BigInt(done.fee_subunits)).toBe(receipt!.gasUsed * receipt!.gasPrice); // charged exactly what the chain took

    const session = await get(`/v1/payment_sessions/${s.session_id}`);
    expect(session).toMatchObject({ refunded_amount_subunits: '4000000', refunded_amount: 4, received_amount_subunits: '10000000' });
    expect((await get(`/v1/payment_sessions/${s.session_id}/refunds`)).data.map((x: any) => x.id)).toEqual([r.id]);
    const hook = await until('the refund.completed webhook', () => rx.received.find((x) => x.raw.includes(r.id)));
    expect(hook.headers['x-service-event']).toBe('refund.completed');
    expect(verifyWebhook(hook.raw, String(hook.headers['x-service-signature']), m.webhookSecret)).toBeTruthy();
    expect(JSON.parse(hook.raw)).toMatchObject({ event_type: 'refund.completed', refund_id: r.id, tx_hash: done.tx_hash, amount: 4 });

    // the overpaid ETH session refunds its excess by default, to the buyer
    const er = await refund(e.session_id, {});
    expect(er.status).toBe(201);
    expect(er.body).toMatchObject({ amount_subunits: '30000000000000000', destination: buyer.address });
    const edone = await refundWhen(e.session_id, er.body.id);
    expect(edone.status).toBe('completed');
    expect(await eth.provider.getBalance(buyer.address)).toBe(ethBefore + 3n * 10n ** 16n);

    // exactly two transactions left the wallet, and the books agree with the chain
    expect(await eth.provider.getTransactionCount(w.address)).toBe(walletNonce + 2);
    expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
    const rec = await t.call<any>('treasury.reconcile');
    expect(rec.differences.filter((d: any) => d.wallet_id === w.id)).toEqual([]);
    // deep reconciliation: each refund's outbox row is one on-chain transaction of its own that did what it says
    const deep = await t.call<any>('treasury.reconcile', { deep: true });
    expect(deep.drifts).toEqual([]);
    for (const id of [r.id, er.body.id])
      expect(await t.node.rt.store.get('recon_rows', `refund:${id}`)).toMatchObject({
        purpose: 'refund',
        status: 'ok',
        hash: expect.any(String),
      });
  });

  it('Ethereum: deposits from two addresses or from a contract ask for a destination; one named is used', async () => {
    const a = Wallet.createRandom();
    const b = Wallet.createRandom();
    for (const x of [a, b]) {
      await eth.setBalance(x.address, 10n ** 18n);
      await usdc.mint(x.address, 5_000_000n);
    }
    const two = await createSession(t, m, RAILS.ethUsdc, 2);
    await usdc.transfer(a, two.address, 1_000_000n);
    await usdc.transfer(b, two.address, 1_000_000n);
    const contract = await createSession(t, m, RAILS.ethUsdc, 1);
    const c = Wallet.createRandom();
    await eth.setBalance(c.address, 10n ** 18n);
    await usdc.mint(c.address, 1_000_000n);
    await usdc.transfer(c, contract.address, 1_000_000n);
    await sessionWhen(t, m, two.session_id, 'completion', (x) => x.status === 'completed');
    await sessionWhen(t, m, contract.session_id, 'completion', (x) => x.status === 'completed');
    await eth.rpc('hardhat_setCode', [c.address, '0x6080604052']); // the payer is (now) a contract

    const ask = await refund(two.session_id, {});
    expect(ask.status).toBe(400);
    expect(ask.body).toMatchObject({ field: 'destination' });
    expect(ask.body.message).toContain('2 addresses');
    const askContract = await refund(contract.session_id, {});
    expect(askContract).toMatchObject({ status: 400, body: { field: 'destination' } });
    expect(askContract.body.message).toContain('contract');
    const ours = await refund(two.session_id, { destination: contract.address });
    expect(ours).toMatchObject({ status: 400, body: { field: 'destination' } });

    // an address that paid sessions of three other merchants too: a shared one (an exchange's), not the buyer's own
    const hot = Wallet.createRandom();
    await eth.setBalance(hot.address, 10n ** 18n);
    await usdc.mint(hot.address, 10_000_000n);
    const others = [await merchant(t), await merchant(t), await merchant(t)];
    const mine = await createSession(t, m, RAILS.ethUsdc, 1);
    for (const [i, x] of [m, ...others].entries()) {
      const paid = i === 0 ? mine : await createSession(t, x, RAILS.ethUsdc, 1);
      await usdc.transfer(hot, paid.address, 1_000_000n);
      await sessionWhen(t, x, paid.session_id, 'completion', (y) => y.status === 'completed');
    }
    const shared = await refund(mine.session_id, {});
    expect(shared).toMatchObject({ status: 400, body: { field: 'destination' } });
    expect(shared.body.message).toContain('3 or more other merchants');

    await swept('ethereum', 'USDC', 3_000_000n);
    // read before the refund is asked for: it may land before its 201 is read
    const before = await usdc.balanceOf(b.address);
    const named = await refund(two.session_id, { destination: b.address.toLowerCase(), amount_subunits: '1000000' });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ destination: b.address, destination_source: 'merchant' });
    await refundWhen(two.session_id, named.body.id);
    expect(await usdc.balanceOf(b.address)).toBe(before + 1_000_000n);
  });

  it('Solana: SOL and USDC go back to the owner who paid, exactly once, the wallet paying the fee', async () => {
    const buyer = await sol.newWallet(3_000_000_000n);
    await sol.mintTo(mint.mint, buyer.address, 10_000_000n);
    const ss = await createSession(t, m, RAILS.sol, 0.5);
    const su = await createSession(t, m, RAILS.solUsdc, 3);
    await sol.transferSol(buyer, ss.address, 500_000_000n);
    await sol.transferToken(buyer, su.address, mint.mint, 3_000_000n);
    await sessionWhen(t, m, ss.session_id, 'SOL completion', (x) => x.status === 'completed');
    await sessionWhen(t, m, su.session_id, 'USDC completion', (x) => x.status === 'completed');
    const w = await swept('solana', 'SOL', 500_000_000n);
    await swept('solana', 'USDC', 3_000_000n);
    const lamportsBefore = sol.balance(buyer.address);
    const tokensBefore = await sol.tokenBalance(buyer.address, mint.mint);

    const rs = await refund(ss.session_id, { amount_subunits: '200000000' });
    expect(rs.status).toBe(201);
    expect(rs.body).toMatchObject({ destination: buyer.address, destination_source: 'sender', fee_subunits: '5000' });
    const ru = await refund(su.session_id, {}, { 'Idempotency-Key': 'sol-usdc' });
    expect(ru.status).toBe(201);
    expect(ru.body).toMatchObject({ destination: buyer.address, amount_subunits: '3000000', fee_subunits: '5000' }); // the buyer's token account exists: no rent
    expect((await refund(su.session_id, { amount_subunits: '1' })).status).toBe(409);

    const [ds, du] = await Promise.all([refundWhen(ss.session_id, rs.body.id), refundWhen(su.session_id, ru.body.id)]);
    expect([ds.status, du.status]).toEqual(['completed', 'completed']);
    expect(sol.balance(buyer.address)).toBe(lamportsBefore + 200_000_000n);
    expect(await sol.tokenBalance(buyer.address, mint.mint)).toBe(tokensBefore + 3_000_000n);
    expect(sol.balance(w.address)).toBe(500_000_000n - 200_000_000n - 10_000n); // two refunds' fees, paid by the wallet
    expect((await get(`/v1/payment_sessions/${su.session_id}`)).refunded_amount_subunits).toBe('3000000');

    // a refund the chain would refuse (a new account must receive at least the rent-exempt minimum) fails
    // before anything is signed: refund.failed, the reservation released, the amount refundable again
    const fresh = (await sol.newWallet(0n)).address;
    const tiny = await refund(ss.session_id, { amount_subunits: '100000', destination: fresh });
    expect(tiny.status).toBe(201);
    const failed = await refundWhen(ss.session_id, tiny.body.id);
    expect(failed).toMatchObject({ status: 'failed', fee_subunits: '0', tx_hash: null });
    expect(failed.failure_reason).toContain('rent-exempt minimum');
    expect((await get(`/v1/payment_sessions/${ss.session_id}`)).refunded_amount_subunits).toBe('200000000');
    const hook = await until('the refund.failed webhook', () => rx.received.find((x) => x.raw.includes(tiny.body.id)));
    expect(JSON.parse(hook.raw)).toMatchObject({ event_type: 'refund.failed', status: 'failed', refund_id: tiny.body.id });
    expect(sol.balance(w.address)).toBe(500_000_000n - 200_000_000n - 10_000n); // nothing was sent

    expect(await t.call('wallets.ledgerCheck')).toMatchObject({ ok: true });
    const rec = await t.call<any>('treasury.reconcile');
    expect(rec.differences.filter((d: any) => d.wallet_id === w.id)).toEqual([]);
    const deep = await t.call<any>('treasury.reconcile', { deep: true });
    expect(deep.drifts).toEqual([]);
    for (const id of [rs.body.id, ru.body.id])
      expect(await t.node.rt.store.get('recon_rows', `refund:${id}`)).toMatchObject({ purpose: 'refund', status: 'ok' });
  });
});
