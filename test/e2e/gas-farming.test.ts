/**
 * Issue 18, leak 2 (Ethereum gas farming), over HTTP against a started node on a real Hardhat node. A
 * gas top-up used to be credited whole to the merchant's wallet and only the gas burnt charged back, so
 * a merchant that moved USDC back and forth between its wallets could withdraw the unused top-up gas as
 * ETH (the issue measured 132,645,253,449,930 wei after 9 movements, never having deposited ETH). Now a
 * top-up is platform gas parked at the address (`sys:gas@<address>`), and every payout pays its own gas
 * from the wallet. After USDC and ETH internal transfers in both directions and payouts:
 * - the ETH the merchant can withdraw is exactly what it deposited minus its payouts minus the fees it
 *   was charged (a merchant that deposited no ETH can withdraw none: its ETH payout is a 409);
 * - the gas wallet's loss on chain equals what the ledger books against it (top-ups parked + fees);
 * - every address holds on chain exactly its wallet's ETH plus the platform gas parked there.
 */
import { join } from 'node:path';
import { Wallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { TestNode } from '../helpers/node.ts';
import { startEthereumMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { createWallet, type WalletRef } from '../integration/agents-helpers.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { ACCOUNTS, accountId, parkedGasAccount, postedBalance, type LedgerAccount } from '../../lib/ledger/index.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';

jest.setTimeout(300_000);
const ETH = 'ethereum:testnet:ETH';

describe('no gas farming: platform gas never becomes a merchant balance', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let t: TestNode;
  let m: RegisteredMerchant;
  let store: Store;
  let gasWallet: string;
  let main: any;
  let second: WalletRef;

  beforeAll(async () => {
    ({ eth, usdc, t, gasWallet } = await startEthereumMoneyNode());
    m = await merchant(t);
    store = await openStore(`sqlite:${join(t.dataDir, 'service.db')}`);
    second = await createWallet(t, m, 'merchant'); // a second merchant wallet (an second wallet pays out only through its policy)
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await t?.stop();
    await eth?.stop();
  });

  const get = async (path: string) => {
    const r = await t.request('GET', path, { key: m.apiKey });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bal = (w: any, token: string) => w.balances.find((b: any) => b.token === token);
  const ethOf = async (id: string) => BigInt(bal(await get(`/v1/wallets/${id}`), 'ETH').available_subunits);
  const pay = async (body: Record<string, unknown>) => {
    const r = await t.request('POST', '/v1/payouts', { key: m.apiKey, body });
    if (r.status !== 201) throw new Error(`payout refused: ${r.status} ${r.text}`);
    return r.body;
  };
  const settled = () =>
    until(
      'the custody moves and payouts to settle',
      async () => {
        const s = await t.call('money-out.status');
        const busy = s.custody_moves.waiting + s.custody_moves.topup + s.custody_moves.moving;
        const { data } = await get('/v1/payouts?limit=100');
        return busy === 0 && data.every((p: any) => p.status !== 'pending' && p.status !== 'processing') ? s : null;
      },
      180_000,
    );
  const account = async (id: string) => {
    const a = await store.get<LedgerAccount>(ACCOUNTS, id);
    return a ? postedBalance(a) : 0n;
  };
  /** what the merchant can withdraw in ETH, and what its wallet transactions say it deposited, paid out and was charged */
  const books = async () => {
    let available = 0n;
    let deposited = 0n;
    let paidOut = 0n;
    let fees = 0n;
    for (const id of [main.id, second.id]) {
      available += await ethOf(id);
      const rows = (await get(`/v1/wallets/${id}/transactions?limit=100`)).data.filter((x: any) => x.token === 'ETH' || x.asset === ETH);
      for (const x of rows.filter((r: any) => r.status === 'posted')) {
        if (x.type === 'settlement') deposited += BigInt(x.amount_subunits);
        if (x.type === 'payout') paidOut += BigInt(x.amount_subunits);
        if (x.type === 'fee' && x.direction === 'out') fees += BigInt(x.amount_subunits);
      }
    }
    return { available, deposited, paidOut, fees };
  };

  it('nine USDC movements between the merchant’s wallets leave it no ETH to withdraw; the gas wallet’s loss is all booked', async () => {
    const gasBefore = await eth.provider.getBalance(gasWallet);
    const s = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(1, s.address, 10_000_000n);
    await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    main = await until(
      'the USDC to become available',
      async () => {
        const { data } = await get('/v1/wallets?limit=100');
        const w = data.find((x: any) => x.chain === 'ethereum' && x.is_default);
        return w && bal(w, 'USDC')?.available_subunits === '10000000' ? w : null;
      },
      90_000,
    );
    // 5 moves out to the second wallet, 4 back: nine custody moves, each topped up by the platform
    for (let i = 0; i < 9; i++) {
      const [from, to] = i % 2 === 0 ? [main, second] : [second, main];
      await pay({ wallet_id: from.id, amount_subunits: '1000000', token: 'USDC', destination: to.address });
      await settled();
    }
    expect(await usdc.balanceOf(second.address)).toBe(1_000_000n);
    expect(await usdc.balanceOf(main.address)).toBe(9_000_000n);

    const gasSpent = gasBefore - (await eth.provider.getBalance(gasWallet));
    const parked = (await account(parkedGasAccount(main.address, ETH))) + (await account(parkedGasAccount(second.address, ETH)));
    console.log(
      `after 9 USDC movements: gas wallet spent ${gasSpent} wei; merchant ETH available ${await ethOf(main.id)} + ${await ethOf(second.id)} wei; platform gas parked at its addresses ${parked} wei`,
    );
    expect(gasSpent).toBeGreaterThan(0n);
    expect(await ethOf(main.id)).toBe(0n);
    expect(await ethOf(second.id)).toBe(0n);
    expect(parked).toBeGreaterThan(0n); // the unused top-up gas: the platform's, at the merchant's addresses
    // the gas wallet's loss on chain is exactly what the ledger booked against it
    expect(-(await account(accountId('sys:gas', ETH)))).toBe(gasSpent);
    // so an ETH payout of the parked gas is refused
    const r = await t.request('POST', '/v1/payouts', {
      key: m.apiKey,
      body: { wallet_id: main.id, amount_subunits: '10000000000000', token: 'ETH', destination: Wallet.createRandom().address },
    });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/insufficient available balance/);
    expect(((await t.call('treasury.reconcile')) as { differences: unknown[] }).differences).toEqual([]);
  });

  it('with ETH deposited: ETH and USDC moves both ways and payouts; withdrawable = deposited − paid out − charged fees', async () => {
    const gasBefore = await eth.provider.getBalance(gasWallet);
    const sysGasBefore = await account(accountId('sys:gas', ETH));
    const s = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(2, s.address, 5n * 10n ** 16n);
    await until('the ETH to become available', async () => ((await ethOf(main.id)) > 0n ? true : null), 90_000);
    await pay({ wallet_id: main.id, amount_subunits: '20000000000000000', token: 'ETH', destination: second.address });
    await pay({ wallet_id: main.id, amount_subunits: '2000000', token: 'USDC', destination: second.address });
    await settled();
    await pay({ wallet_id: second.id, amount_subunits: '5000000000000000', token: 'ETH', destination: main.address });
    await pay({ wallet_id: second.id, amount_subunits: '1000000', token: 'USDC', destination: Wallet.createRandom().address });
    await pay({ wallet_id: second.id, amount_subunits: '3000000000000000', token: 'ETH', destination: Wallet.createRandom().address });
    await pay({ wallet_id: main.id, amount_subunits: '1500000', token: 'USDC', destination: Wallet.createRandom().address });
    await settled();

    const b = await books();
    console.log(`ETH books: deposited ${b.deposited}, paid out ${b.paidOut}, fees charged ${b.fees}, withdrawable ${b.available}`);
    expect(b.deposited).toBe(5n * 10n ** 16n);
    expect(b.paidOut).toBe(3n * 10n ** 15n);
    expect(b.fees).toBeGreaterThan(0n);
    expect(b.available).toBe(b.deposited - b.paidOut - b.fees);
    // the platform paid only for the custody moves: its gas wallet's loss is what the ledger booked against it
    const gasSpent = gasBefore - (await eth.provider.getBalance(gasWallet));
    expect(sysGasBefore - (await account(accountId('sys:gas', ETH)))).toBe(gasSpent);
    // and each address holds exactly its wallet's ETH plus the platform's parked gas
    for (const w of [main, second]) {
      expect(await eth.provider.getBalance(w.address)).toBe((await ethOf(w.id)) + (await account(parkedGasAccount(w.address, ETH))));
    }
    expect(((await t.call('treasury.reconcile')) as { differences: unknown[] }).differences).toEqual([]);
  });
});
