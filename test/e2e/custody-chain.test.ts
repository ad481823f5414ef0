/**
 * Custody follows the ledger (README "Internal transfers and custody moves"), over HTTP against a started
 * node on a real Hardhat node: a merchant wallet funded on chain (a session paid and swept) pays out to
 * a second wallet of the same merchant (a merchant wallet: an agent wallet pays out only through its spend
 * policy, lib/payouts/accept.ts). The second wallet's balance is available at once; the custody move
 * brings exactly that amount to the agent's address on chain (its gas paid by the platform's gas wallet);
 * reconciliation is clean; and an on-chain payout from the second wallet (accepted before the move
 * confirmed: it waits, never fails) arrives at an external address. The same on the LiteSVM harness for
 * SPL USDC and SOL (the gas wallet the fee payer, creating the agent's token account).
 */
import { Wallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { fundSolanaWallet, startMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { createWallet, type WalletRef } from '../integration/agents-helpers.ts';
import { custodyIdle, getOk, payoutFinal, payoutOk, settlementPosted } from '../helpers/merchant-money.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(240_000);

describe('internal transfers move custody on chain', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let m: RegisteredMerchant;
  let second: WalletRef;
  let main: any;
  let stop: () => Promise<unknown>;

  beforeAll(async () => {
    ({ eth, usdc, sol, mint, t, stop } = await startMoneyNode());
    m = await merchant(t);
    second = await createWallet(t, m, 'merchant');
  }, 180_000);

  afterAll(async () => {
    await stop?.();
  });

  const get = (path: string) => getOk(t, m, path);
  const bal = (w: any, token: string) => w.balances.find((b: any) => b.token === token);
  const defaultWallet = async (chain = 'ethereum') =>
    (await get('/v1/wallets?limit=100')).data.find((w: any) => w.chain === chain && w.is_default);
  const createPayout = (body: Record<string, unknown>) => payoutOk(t, m, body);
  const payoutWhen = (id: string) => payoutFinal(t, m, id);
  const moved = (walletId: string) => custodyIdle(t, `the custody moves into ${walletId} to confirm`);
  const reconcile = () => t.call('treasury.reconcile') as Promise<{ checked: number; differences: unknown[] }>;

  it('USDC: available at once, the exact amount arrives at the second wallet address, reconciliation is clean, the second wallet pays out on chain', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(1, s.address, 10_000_000n);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    main = await until(
      'the USDC settlement to become available',
      async () => {
        const w = await defaultWallet();
        return w && bal(w, 'USDC')?.available_subunits === '10000000' ? w : null;
      },
      90_000,
    );
    expect(await usdc.balanceOf(main.address)).toBe(10_000_000n);

    const internal = await createPayout({ wallet_id: main.id, amount_subunits: '6000000', token: 'USDC', destination: second.address });
    expect(internal).toMatchObject({ status: 'completed', execution: 'ledger', destination_wallet_id: second.id });
    // the ledger semantics stay: available at once
    expect(bal(await get(`/v1/wallets/${second.id}`), 'USDC')).toMatchObject({ available_subunits: '6000000', pending_subunits: '0' });
    expect(bal(await get(`/v1/wallets/${main.id}`), 'USDC').available_subunits).toBe('4000000');

    await moved(second.id);
    expect(await usdc.balanceOf(second.address)).toBe(6_000_000n);
    expect(await usdc.balanceOf(main.address)).toBe(4_000_000n);
    const clean = await reconcile();
    expect(clean.checked).toBeGreaterThanOrEqual(4);
    expect(clean.differences).toEqual([]);
    // the platform paid the move's gas: booked as fees, none of it the merchant's or the agent's money
    const mainTxs = (await get(`/v1/wallets/${main.id}/transactions?limit=100`)).data;
    expect(mainTxs).toContainEqual(
      expect.objectContaining({ type: 'transfer_out', payout_id: internal.id, amount_subunits: '6000000', status: 'posted' }),
    );
    // the gas left at main's address by the move's top-up is the platform's, parked there: never main's ETH
    const mainEth = await get(`/v1/wallets/${main.id}`);
    expect(bal(mainEth, 'ETH').available_subunits).toBe('0');
    expect(await eth.provider.getBalance(main.address)).toBeGreaterThan(0n);
    // and the second wallet, holding no ETH, cannot make the platform pay its payout's gas
    const refused = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: second.id, amount_subunits: '2500000', token: 'USDC', destination: Wallet.createRandom().address },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/for the network fee/);
  });

  it('ETH: a payout from the second wallet accepted before the move confirmed waits for it, then arrives exactly', async () => {
    const s = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(2, s.address, 5n * 10n ** 16n);
    await settlementPosted(t, m, main.id, s.session_id, 'the ETH settlement to be posted');
    const secondBefore = await eth.provider.getBalance(second.address);
    const mainPosted = BigInt(bal(await get(`/v1/wallets/${main.id}`), 'ETH').available_subunits);

    const internal = await createPayout({
      wallet_id: main.id,
      amount_subunits: '20000000000000000',
      token: 'ETH',
      destination: second.address,
    });
    expect(internal).toMatchObject({ status: 'completed', execution: 'ledger' });
    // at once, while the tokens are still on their way: the agent's ETH pays for its own payout's gas too
    const dest = Wallet.createRandom().address;
    const out = await createPayout({ wallet_id: second.id, amount_subunits: '10000000000000000', token: 'ETH', destination: dest });
    expect(out.status).toBe('pending');
    const done = await payoutWhen(out.id);
    expect(done.status).toBe('completed');
    expect(await eth.provider.getBalance(dest)).toBe(10n ** 16n);
    await moved(second.id);
    // exactly the amount arrived: the agent's address holds what it had + 0.02 − 0.01 − its payout's gas
    const secondAfter = await eth.provider.getBalance(second.address);
    expect(secondAfter).toBe(secondBefore + 2n * 10n ** 16n - 10n ** 16n - BigInt(done.fee_subunits));
    const w = await get(`/v1/wallets/${second.id}`);
    expect(BigInt(bal(w, 'ETH').available_subunits)).toBe(secondAfter);
    // the platform paid the move's gas: main's ETH is exactly what it had less the 0.02 it sent
    const m2 = await get(`/v1/wallets/${main.id}`);
    expect(BigInt(bal(m2, 'ETH').available_subunits)).toBe(mainPosted - 2n * 10n ** 16n);
    expect((await reconcile()).differences).toEqual([]);

    // with ETH of its own, the second wallet pays out USDC on chain, its gas charged to it
    const usdcDest = Wallet.createRandom().address;
    const secondEth = BigInt(bal(w, 'ETH').available_subunits);
    const usdcOut = await createPayout({ wallet_id: second.id, amount_subunits: '2500000', token: 'USDC', destination: usdcDest });
    expect(usdcOut.execution).toBe('chain');
    const usdcDone = await payoutWhen(usdcOut.id);
    expect(usdcDone.status).toBe('completed');
    expect(await usdc.balanceOf(usdcDest)).toBe(2_500_000n);
    expect(await usdc.balanceOf(second.address)).toBe(3_500_000n);
    const secondNow = await get(`/v1/wallets/${second.id}`);
    expect(bal(secondNow, 'USDC').available_subunits).toBe('3500000');
    expect(BigInt(bal(secondNow, 'ETH').available_subunits)).toBe(secondEth - BigInt(usdcDone.fee_subunits));
    expect((await reconcile()).differences).toEqual([]);
    expect(await t.call('money-out.scan')).toEqual({ sweeps: 0, payouts: 0, refunds: 0, custody_moves: 0, transactions: 0 });
  });

  it('Solana SPL USDC and SOL: the gas wallet pays; the exact amounts arrive; the second wallet pays out on chain', async () => {
    const w = await fundSolanaWallet(t, sol, mint, m, { usdc: 8, sol: 0.5 });
    const solSecond = await createWallet(t, m, 'merchant', 'solana', 'testnet');

    const a = await createPayout({ wallet_id: w.id, amount_subunits: '5000000', token: 'USDC', destination: solSecond.address });
    const b = await createPayout({ wallet_id: w.id, amount_subunits: '300000000', token: 'SOL', destination: solSecond.address });
    expect([a.execution, b.execution, a.status, b.status]).toEqual(['ledger', 'ledger', 'completed', 'completed']);
    const now = await get(`/v1/wallets/${solSecond.id}`);
    expect([bal(now, 'USDC').available_subunits, bal(now, 'SOL').available_subunits]).toEqual(['5000000', '300000000']);

    await moved(solSecond.id);
    expect(await sol.tokenBalance(solSecond.address, mint.mint)).toBe(5_000_000n);
    expect(sol.balance(solSecond.address)).toBe(300_000_000n);
    expect(await sol.tokenBalance(w.address, mint.mint)).toBe(3_000_000n);
    expect(sol.balance(w.address)).toBe(200_000_000n);
    expect((await reconcile()).differences).toEqual([]);

    const dest = (await sol.newWallet(0n)).address;
    const out = await createPayout({ wallet_id: solSecond.id, amount_subunits: '2000000', token: 'USDC', destination: dest });
    expect((await payoutWhen(out.id)).status).toBe('completed');
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(2_000_000n);
    expect(await sol.tokenBalance(solSecond.address, mint.mint)).toBe(3_000_000n);
    expect((await reconcile()).differences).toEqual([]);
  });

  it('Solana SOL: a move the chain would refuse (sender left below rent-exempt) waits unsigned and stays in flight', async () => {
    const w = await defaultWallet('solana');
    const solSecond = (await get('/v1/wallets?limit=100')).data.find((x: any) => x.chain === 'solana' && !x.is_default);
    const count = (s: any) => Object.values(s.transactions as Record<string, number>).reduce((a, b) => a + b, 0);
    const before = await t.call('money-out.status');
    const p = await createPayout({ wallet_id: w.id, amount_subunits: '199500000', token: 'SOL', destination: solSecond.address });
    expect(p).toMatchObject({ status: 'completed', execution: 'ledger' });
    for (let i = 0; i < 5; i++) await t.call('money-out.scan');
    const after = await t.call('money-out.status');
    expect(after.custody_moves.waiting).toBe(1);
    expect(count(after)).toBe(count(before)); // nothing signed, nothing sent
    expect(sol.balance(w.address)).toBe(200_000_000n);
    // the second paid its USDC payout's fee and the destination's new token account's rent (previous test)
    expect(sol.balance(solSecond.address)).toBe(300_000_000n - 5_000n - 2_039_280n);
    expect((await reconcile()).differences).toEqual([]); // the move is in flight, not a difference
  });
});
