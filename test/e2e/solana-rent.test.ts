/**
 * Issue 18, leak 3 (Solana rent), over HTTP against a started node on the LiteSVM harness. An SPL payout
 * to a new address creates the destination's token account; its rent (2,039,280 lamports) used to come
 * from the platform's gas wallet and be booked nowhere (the issue measured: gas wallet −2,049,280,
 * ledger 10,000, merchant charged 0). Now the payout is paid by its own wallet (fee payer) and charged,
 * as quoted at acceptance, exactly what its address spent: the fee and the rent, each booked. A sweep
 * that creates a wallet's token account is the platform's cost: the gas wallet's loss equals what the
 * ledger books against `sys:gas`, rent included.
 */
import { join } from 'node:path';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import type { TestNode } from '../helpers/node.ts';
import { startSolanaMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, until } from '../integration/chain-listener-helpers.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { ACCOUNTS, accountId, postedBalance, type LedgerAccount } from '../../lib/ledger/index.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(240_000);
const SOL = 'solana:testnet:SOL';
const RENT = 2_039_280n;

describe('Solana token-account rent is booked and charged per the fee policy', () => {
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let t: TestNode;
  let m: RegisteredMerchant;
  let store: Store;
  let gasWallet: string;

  beforeAll(async () => {
    ({ sol, mint, t, gasWallet } = await startSolanaMoneyNode());
    m = await merchant(t);
    store = await openStore(`sqlite:${join(t.dataDir, 'service.db')}`);
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await t?.stop();
    await sol?.stop();
  });

  const get = async (path: string) => {
    const r = await t.request('GET', path, { key: m.apiKey });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bal = (x: any, token: string) => x.balances.find((b: any) => b.token === token);
  const sysGas = async () => {
    const a = await store.get<LedgerAccount>(ACCOUNTS, accountId('sys:gas', SOL));
    return a ? postedBalance(a) : 0n;
  };

  it('a sweep creating the wallet’s token account: the gas wallet’s whole loss (fees and rent) is booked', async () => {
    const gasBefore = sol.balance(gasWallet);
    const bookedBefore = await sysGas();
    const payer = await sol.newWallet(3_000_000_000n);
    await sol.mintTo(mint.mint, payer.address, 100_000_000n);
    const su = await createSession(t, m, RAILS.solUsdc, 10);
    await sol.transferToken(payer, su.address, mint.mint, 10_000_000n);
    const ss = await createSession(t, m, RAILS.sol, 0.1);
    await sol.transferSol(payer, ss.address, 100_000_000n);
    await until(
      'both settlements to become available',
      async () => {
        const { data } = await get('/v1/wallets?limit=100');
        const x = data.find((y: any) => y.chain === 'solana' && y.type === 'merchant');
        return x && bal(x, 'USDC')?.available_subunits === '10000000' && bal(x, 'SOL')?.available_subunits === '100000000' ? x : null;
      },
      90_000,
    );
    const spent = gasBefore - sol.balance(gasWallet);
    expect(spent).toBe(RENT + 2n * 10_000n); // the wallet's new token account + two sweeps' two signatures each
    expect(bookedBefore - (await sysGas())).toBe(spent);
    const rent = await store.get<LedgerAccount>(ACCOUNTS, accountId('sys:rent', SOL));
    expect(postedBalance(rent!)).toBe(RENT);
  });

  it('one SPL payout to a new address: quoted with the rent, charged fee + rent from the wallet, the gas wallet untouched', async () => {
    const { data } = await get('/v1/wallets?limit=100');
    const w = data.find((y: any) => y.chain === 'solana' && y.type === 'merchant');
    const dest = (await sol.newWallet(0n)).address;
    const gasBefore = sol.balance(gasWallet);
    const walletBefore = sol.balance(w.address);
    const r = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest },
    });
    expect(r.status).toBe(201);
    expect(r.body.fee_subunits).toBe((5_000n + RENT).toString()); // the quote: one signature + the new account's rent
    expect(bal(await get(`/v1/wallets/${w.id}`), 'SOL').available_subunits).toBe(String(walletBefore - 5_000n - RENT)); // reserved
    const done = await until(
      'the payout to complete',
      async () => {
        const p = await get(`/v1/payouts/${r.body.id}`);
        return p.status === 'completed' || p.status === 'failed' ? p : null;
      },
      90_000,
    );
    expect(done.status).toBe('completed');
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(1_000_000n);
    // measured: the gas wallet spent nothing; the wallet's address spent fee + rent, and was charged exactly that
    expect(sol.balance(gasWallet)).toBe(gasBefore);
    expect(walletBefore - sol.balance(w.address)).toBe(5_000n + RENT);
    expect(done.fee_subunits).toBe((5_000n + RENT).toString());
    expect(BigInt(bal(await get(`/v1/wallets/${w.id}`), 'SOL').available_subunits)).toBe(sol.balance(w.address));
    const rows = (await get(`/v1/wallets/${w.id}/transactions?limit=100`)).data.filter(
      (x: any) => x.payout_id === done.id && x.type === 'fee' && x.status === 'posted',
    );
    expect(rows.map((x: any) => x.amount_subunits).sort()).toEqual(['2039280', '5000']);
    // a second payout to the same address creates nothing: quoted and charged the fee alone
    const again = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: w.id, amount_subunits: '1000000', token: 'USDC', destination: dest },
    });
    expect(again.body.fee_subunits).toBe('5000');
    expect(((await t.call('treasury.reconcile')) as { differences: unknown[] }).differences).toEqual([]);
  });
});
