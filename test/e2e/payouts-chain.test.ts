/**
 * Money out end to end, through HTTP against a started node on a real Hardhat node (TestUSDC) and the
 * LiteSVM harness: a session paid on chain is credited pending to the merchant's default wallet, swept
 * into the wallet's address, becomes available, and a payout of part of it arrives at an external
 * address with the exact amount (USDC and ETH on Ethereum; USDC and SOL on Solana), with a signed
 * payout.completed webhook. A reorg of a swept deposit takes its credit back; the operator's
 * reconciliation agrees with the chain, and lists a planted difference.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { fundSolanaWallet, startMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { startReceiver, type Receiver } from '../integration/webhooks-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { verifyWebhook } from '../../lib/webhooks/verify.ts';
import { getOk, payoutFinal, payoutOk, settlementPosted } from '../helpers/merchant-money.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(240_000);
const run = promisify(execFile);

describe('sweeps and payouts on chain, over HTTP', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let rx: Receiver;
  let m: RegisteredMerchant;
  let env: Record<string, string>;
  let stop: () => Promise<unknown>;
  let gasWallets: Record<'ethereum' | 'solana', string>;

  beforeAll(async () => {
    rx = await startReceiver();
    // the operator funds the node's gas wallets
    ({ eth, usdc, sol, mint, t, env, gasWallets, stop } = await startMoneyNode({ WEBHOOK_SCAN_INTERVAL_MS: '100' }));
    m = await merchant(t, { webhook_url: rx.url });
  }, 180_000);

  afterAll(async () => {
    await stop?.();
    await rx?.close();
  });

  const get = (path: string) => getOk(t, m, path);
  const defaultWallet = async (chain: string) => {
    const { data } = await get('/v1/wallets?limit=100');
    return data.find((w: any) => w.chain === chain && w.network === 'testnet' && w.is_default !== false);
  };
  const bal = (w: any, token: string) => w.balances.find((b: any) => b.token === token);
  const walletWhen = (chain: string, what: string, pred: (w: any) => boolean) =>
    until(
      what,
      async () => {
        const w = await defaultWallet(chain);
        return w && pred(w) ? get(`/v1/wallets/${w.id}`) : null;
      },
      90_000,
    );
  const payoutWhen = (id: string) => payoutFinal(t, m, id, 90_000);
  const createPayout = (body: Record<string, unknown>) => payoutOk(t, m, body);

  it('Ethereum USDC: credited pending, swept, available; a payout of part arrives exactly, with a signed webhook', async () => {
    const s = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(1, s.address, 10_000_000n);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    const w = await walletWhen(
      'ethereum',
      'the USDC settlement to become available',
      (x) => bal(x, 'USDC')?.available_subunits === '10000000',
    );
    expect(bal(w, 'USDC')).toMatchObject({ available_subunits: '10000000', pending_subunits: '0' });
    expect(await usdc.balanceOf(w.address)).toBe(10_000_000n);
    expect(await usdc.balanceOf(s.address)).toBe(0n);

    const dest = Wallet.createRandom().address;
    // the merchant pays its payouts' gas (fee policy): with no ETH in the wallet, a USDC payout is refused
    const noGas = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: w.id, amount: 4, token: 'USDC', destination: dest },
    });
    expect(noGas.status).toBe(409);
    expect(noGas.body.message).toMatch(/insufficient available balance for the network fee: the payout's fee is 0\.\d+ ETH/);
    expect(bal(await get(`/v1/wallets/${w.id}`), 'USDC').available_subunits).toBe('10000000');
    // the merchant funds the wallet's gas with an ETH session of its own
    const gasSession = await createSession(t, m, RAILS.eth, 0.01);
    await eth.sendEth(2, gasSession.address, 10n ** 16n);
    await walletWhen('ethereum', 'the ETH for gas to become available', (x) => BigInt(bal(x, 'ETH')?.available_subunits ?? '0') > 0n);
    const gasWallet = gasWallets.ethereum;
    const gasBefore = await eth.provider.getBalance(gasWallet);
    const ethBefore = await eth.provider.getBalance(w.address);

    const p = await createPayout({ wallet_id: w.id, amount: 4, token: 'USDC', destination: dest });
    expect(p.status).toBe('pending');
    const quote = BigInt(p.fee_subunits); // the quote, reserved from the wallet's ETH with the amount
    expect(quote).toBeGreaterThan(0n);
    expect(BigInt(bal(await get(`/v1/wallets/${w.id}`), 'ETH').available_subunits)).toBe(ethBefore - quote);
    const done = await payoutWhen(p.id);
    expect(done).toMatchObject({ status: 'completed', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), amount_subunits: '4000000' });
    expect(await usdc.balanceOf(dest)).toBe(4_000_000n);
    // charged exactly the gas its own address burnt, within the quote; the gas wallet paid nothing
    const receipt = await eth.provider.getTransactionReceipt(done.tx_hash);
    expect(done.fee_subunits).toBe((receipt!.gasUsed * receipt!.gasPrice).toString());
    expect(BigInt(done.fee_subunits)).toBeLessThanOrEqual(quote);
    expect(await eth.provider.getBalance(gasWallet)).toBe(gasBefore);
    expect(await eth.provider.getBalance(w.address)).toBe(ethBefore - BigInt(done.fee_subunits));
    expect(BigInt(bal(await get(`/v1/wallets/${w.id}`), 'ETH').available_subunits)).toBe(ethBefore - BigInt(done.fee_subunits));
    const after = await get(`/v1/wallets/${w.id}`);
    expect(bal(after, 'USDC').available_subunits).toBe('6000000');
    const txs = (await get(`/v1/wallets/${w.id}/transactions?limit=100`)).data;
    expect(txs).toContainEqual(
      expect.objectContaining({ type: 'payout', payout_id: p.id, status: 'posted', amount_subunits: '4000000', tx_hash: done.tx_hash }),
    );
    expect(txs).toContainEqual(expect.objectContaining({ type: 'settlement', session_id: s.session_id, status: 'posted' }));

    const hook = await until('the payout.completed webhook', () => rx.received.find((r) => JSON.parse(r.raw).payout_id === p.id));
    expect(verifyWebhook(hook.raw, String(hook.headers['x-service-signature']), m.webhookSecret)).toBe(true);
    expect(JSON.parse(hook.raw)).toMatchObject({
      event_type: 'payout.completed',
      payout_id: p.id,
      status: 'completed',
      amount: 4,
      currency: 'USDC',
      chain: 'ethereum',
      network: 'testnet',
      tx_hash: done.tx_hash,
    });
  });

  it('Ethereum ETH: the sweep pays its own gas (a fee transaction); a payout arrives exactly', async () => {
    const w0 = await defaultWallet('ethereum');
    const before = await eth.provider.getBalance(w0.address); // the ETH left after the USDC payout's gas
    const s = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(2, s.address, 5n * 10n ** 16n);
    await settlementPosted(t, m, w0.id, s.session_id, 'the ETH settlement to be posted');
    const w = await get(`/v1/wallets/${w0.id}`);
    const onChain = await eth.provider.getBalance(w.address);
    expect(BigInt(bal(w, 'ETH').available_subunits)).toBe(onChain);
    const fee = 5n * 10n ** 16n - (onChain - before);
    expect(fee).toBeGreaterThan(0n);
    const txs = (await get(`/v1/wallets/${w.id}/transactions?limit=100`)).data;
    expect(txs).toContainEqual(expect.objectContaining({ type: 'fee', amount_subunits: fee.toString(), status: 'posted' }));

    const dest = Wallet.createRandom().address;
    const p = await createPayout({ wallet_id: w.id, amount_subunits: '10000000000000000', token: 'ETH', destination: dest });
    expect((await payoutWhen(p.id)).status).toBe('completed');
    expect(await eth.provider.getBalance(dest)).toBe(10n ** 16n);
    const after = await get(`/v1/wallets/${w.id}`);
    expect(BigInt(bal(after, 'ETH').available_subunits)).toBe(await eth.provider.getBalance(w.address));
  });

  it('20 concurrent payout requests with one Idempotency-Key: one payout, exactly one transfer on chain', async () => {
    const w = await defaultWallet('ethereum');
    const nonceBefore = await eth.provider.getTransactionCount(w.address);
    const dest = Wallet.createRandom().address;
    const body = { wallet_id: w.id, amount_subunits: '1000000000000000', token: 'ETH', destination: dest };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.request('POST', '/v1/payouts', { key: m.apiKey, body, headers: { 'Idempotency-Key': 'one-payout-please' } }),
      ),
    );
    const ids = new Set(answers.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    for (const r of answers) expect([201, 409]).toContain(r.status);
    const [id] = [...ids];
    expect((await payoutWhen(id!)).status).toBe('completed');
    expect(await eth.provider.getBalance(dest)).toBe(10n ** 15n);
    expect(await eth.provider.getTransactionCount(w.address)).toBe(nonceBefore + 1);
    const { data } = await get('/v1/payouts?limit=100');
    expect(data.filter((p: any) => p.destination === dest)).toHaveLength(1);
  });

  it('Solana USDC and SOL: swept with the gas wallet paying the fees; payouts arrive exactly, their fees and rent charged', async () => {
    const w = await fundSolanaWallet(t, sol, mint, m, { usdc: 8, sol: 0.5 });
    expect(await sol.tokenBalance(w.address, mint.mint)).toBe(8_000_000n);
    expect(sol.balance(w.address)).toBe(500_000_000n);

    const dest = (await sol.newWallet(0n)).address;
    const a = await createPayout({ wallet_id: w.id, amount: 2.5, token: 'USDC', destination: dest });
    const b = await createPayout({ wallet_id: w.id, amount: 0.2, token: 'SOL', destination: dest });
    expect((await payoutWhen(a.id)).status).toBe('completed');
    expect((await payoutWhen(b.id)).status).toBe('completed');
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(2_500_000n);
    expect(sol.balance(dest)).toBe(200_000_000n);
    const after = await get(`/v1/wallets/${w.id}`);
    expect(bal(after, 'USDC').available_subunits).toBe('5500000');
    // the wallet paid both payouts' fees (5,000 lamports each) and the new token account's rent (2,039,280)
    expect(bal(after, 'SOL').available_subunits).toBe(String(300_000_000 - 10_000 - 2_039_280));
    expect(sol.balance(w.address)).toBe(BigInt(300_000_000 - 10_000 - 2_039_280));
  });

  it('a reorg of a swept deposit takes its credit back (settlement_reversal); ledger and chain still agree', async () => {
    const w0 = await defaultWallet('ethereum');
    const before = BigInt(bal(w0, 'USDC').available_subunits);
    const snap = await eth.snapshot();
    const s = await createSession(t, m, RAILS.ethUsdc, 7);
    await usdc.transfer(1, s.address, 7_000_000n);
    await walletWhen(
      'ethereum',
      'the reorged-to-be deposit to be swept',
      (x) => BigInt(bal(x, 'USDC').available_subunits) === before + 7_000_000n,
    );
    await eth.revert(snap); // the deposit and its sweep leave the canonical chain
    await eth.mine(3);
    const w = await walletWhen('ethereum', 'the credit to be taken back', (x) => BigInt(bal(x, 'USDC').available_subunits) === before);
    expect(await usdc.balanceOf(w.address)).toBe(before);
    const txs = (await get(`/v1/wallets/${w.id}/transactions?limit=100`)).data;
    expect(txs).toContainEqual(
      expect.objectContaining({ type: 'settlement_reversal', session_id: s.session_id, amount_subunits: '7000000' }),
    );
  });

  it('the operator reconciliation matches the chain, and lists a planted difference', async () => {
    const opEnv = { ...process.env, ...env, DATA_DIR: t.dataDir, LOG_LEVEL: 'error' };
    const reconcile = async () => JSON.parse((await run(process.execPath, ['scripts/operator.ts', 'reconcile'], { env: opEnv })).stdout);
    const clean = await reconcile();
    expect(clean.checked).toBeGreaterThanOrEqual(4);
    expect(clean.differences).toEqual([]);
    const w = await defaultWallet('solana');
    await sol.mintTo(mint.mint, w.address, 1234n); // money the ledger knows nothing about
    const status = await t.call('money-out.status');
    expect(status.transactions.failed).toBe(0);
    expect(status.transactions.confirmed).toBeGreaterThanOrEqual(10);
    expect(status.sweeps).toMatchObject({ waiting: 0, failed: 0 });
    expect(await t.call('money-out.scan')).toEqual({ sweeps: 0, payouts: 0, refunds: 0, custody_moves: 0, transactions: 0 }); // nothing left to do
    const planted = await reconcile();
    expect(planted.differences).toEqual([
      expect.objectContaining({ wallet_id: w.id, token: 'USDC', difference_subunits: '1234', chain: 'solana' }),
    ]);
  });
});
