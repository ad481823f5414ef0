/**
 * Network costs at their edges (issue 18 acceptance review), over HTTP against a started node on a real
 * Hardhat node whose mining the test holds and whose base fee it raises, as a busy mainnet would:
 * - an x402 settlement that lands and reverts (the payer emptied its balance ahead of it) still cost
 *   the gas wallet its fee: that fee is booked as the platform's, like a settled one's;
 * - a transaction priced at its quote (a payout) or at the gas the platform parked for it (a custody move)
 *   that the base fee overtook is never replaced above that price: it waits, re-sent unchanged, until
 *   the price comes back down. So a custody move never burns the merchant's own ETH beside the parked
 *   gas (`sys:gas@<address>` never goes below zero), and a payout is never charged above its quote nor
 *   less than the chain took.
 * After each, `reconcile --deep` is clean and the address holds on chain exactly the merchant's ETH
 * plus the platform gas parked there.
 */
import { join } from 'node:path';
import { Wallet, type HDNodeWallet } from 'ethers';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { TestNode } from '../helpers/node.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { startEthereumMoneyNode } from '../helpers/money-node.ts';
import { merchant } from '../integration/sessions-helpers.ts';
import { RAILS, createSession, sessionWhen, until } from '../integration/chain-listener-helpers.ts';
import { createWallet, type WalletRef } from '../integration/agents-helpers.ts';
import { signEip3009Proof } from '../../lib/x402/payer.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import { ACCOUNTS, accountId, parkedGasAccount, postedBalance, type LedgerAccount } from '../../lib/ledger/index.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import type { Doc } from '../../lib/store/port.ts';
import type { ReconcileReport } from '../../lib/treasury/reconcile/run.ts';

jest.setTimeout(300_000);
const ETH = 'ethereum:testnet:ETH';

describe('network costs at the edges (Hardhat, mining held by the test)', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let t: TestNode;
  let m: RegisteredMerchant;
  let store: Store;
  let gasWallet: string;
  let main: any;
  let agent: WalletRef;

  beforeAll(async () => {
    ({ eth, usdc, t, gasWallet } = await startEthereumMoneyNode({
      // a transaction still not mined is replaced quickly (when it may be)
      BROADCAST_BUMP_AFTER_MS: '1000',
      BROADCAST_REBROADCAST_MS: '500',
      X402_SETTLE_TIMEOUT_MS: '1000',
      AGENTS_SCAN_INTERVAL_MS: '300',
    }));
    store = await openStore(`sqlite:${join(t.dataDir, 'service.db')}`);
    m = await merchant(t);
    expect((await deep()).ok).toBe(true); // meets the gas wallet: its opening balance
    // the merchant's ETH and USDC, deposited and swept into its wallet
    const se = await createSession(t, m, RAILS.eth, 0.05);
    await eth.sendEth(2, se.address, 5n * 10n ** 16n);
    const su = await createSession(t, m, RAILS.ethUsdc, 10);
    await usdc.transfer(1, su.address, 10_000_000n);
    await sessionWhen(t, m, su.session_id, 'completion', (x) => x.status === 'completed');
    main = await until(
      'the ETH and USDC to become available',
      async () => {
        const w = (await get('/v1/wallets?limit=100')).data.find((x: any) => x.chain === 'ethereum' && x.is_default);
        return w && bal(w, 'USDC') === 10_000_000n && bal(w, 'ETH') > 0n ? w : null;
      },
      120_000,
    );
    agent = await createWallet(t, m, 'agent');
  }, 240_000);

  afterAll(async () => {
    await eth?.setAutomine(true).catch(() => undefined);
    await store?.close();
    await t?.stop();
    await closeClients();
    await eth?.stop();
  });

  const deep = () => t.call<ReconcileReport>('treasury.reconcile', { deep: true });
  const get = async (path: string) => {
    const r = await t.request('GET', path, { key: m.apiKey });
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bal = (w: any, token: string) => BigInt(w.balances.find((b: any) => b.token === token)?.available_subunits ?? '0');
  const ethOf = async (id: string) => bal(await get(`/v1/wallets/${id}`), 'ETH');
  const account = async (id: string) => {
    const a = await store.get<LedgerAccount>(ACCOUNTS, id);
    return a ? postedBalance(a) : 0n;
  };
  const parked = (address: string) => account(parkedGasAccount(address, ETH));
  const row = (id: string) => store.get<ChainTxDoc>(CHAIN_TXS, id);
  const sentRow = (id: string) => until(`${id} sent`, async () => ((await row(id))?.status === 'sent' ? row(id) : null), 60_000);
  const nextBaseFee = (wei: bigint) => eth.rpc('hardhat_setNextBlockBaseFeePerGas', [`0x${wei.toString(16)}`]);
  const receiptOf = (hash: string) => eth.provider.getTransactionReceipt(hash);
  /** the base fee rises far above `price` for one block, then falls back block by block (empty blocks) */
  async function overtake(price: bigint, rowId: string): Promise<ChainTxDoc> {
    await nextBaseFee(price * 8n);
    await eth.mine();
    const stuck = (await row(rowId))!;
    for (const a of stuck.attempts) expect(await receiptOf(a.hash)).toBeNull();
    // time for the outbox to replace it, were it allowed to; then the price comes back down
    await new Promise((r) => setTimeout(r, 3_000));
    await eth.mine();
    const seen = (await row(rowId))!;
    await eth.mine(40);
    return seen;
  }

  it('an x402 settlement that reverts on chain: its fee is booked as the platform cost it is', async () => {
    const r = await t.request('POST', '/v1/x402/challenges', {
      key: m.apiKey,
      body: {
        resource: '/edge/reverted',
        amount_subunits: '1500000',
        paymentMethod: { chain: 'ethereum', network: 'testnet', token: 'USDC' },
      },
    });
    expect(r.status).toBe(201);
    const payer: HDNodeWallet = Wallet.createRandom().connect(eth.provider);
    await usdc.mint(payer.address, 1_500_000n);
    await eth.setBalance(payer.address, 10n ** 18n);
    const block = await eth.provider.getBlock('latest');
    const proof = await signEip3009Proof(payer, r.body.challenge, {
      chainId: eth.chainId,
      tokenName: 'Test USD Coin',
      tokenVersion: '2',
      nowSeconds: Math.max(block!.timestamp, Math.floor(Date.now() / 1000)),
    });
    const gasBefore = await eth.provider.getBalance(gasWallet);
    const sysGasBefore = await account(accountId('sys:gas', ETH));
    await eth.setAutomine(false);
    try {
      const redeemed = await t.request('POST', '/v1/x402/redeem', { key: m.apiKey, body: { proof, resource: '/edge/reverted' } });
      expect(redeemed.status).toBe(202);
      const settlement = await sentRow(`x402:${r.body.challenge_id}`);
      // the payer moves its USDC away ahead of the settlement (a higher gas price, first in the block)
      const price = BigInt(settlement.attempts[0]!.gas_price!);
      await (usdc.contract.connect(payer) as any).getFunction('transfer')(Wallet.createRandom().address, 1_500_000n, {
        gasPrice: price * 4n,
        gasLimit: 100_000n,
      });
      await eth.mine();
    } finally {
      await eth.setAutomine(true);
    }
    const settled = await until(
      'the settlement to fail',
      async () => {
        const x = await row(`x402:${r.body.challenge_id}`);
        const red = await store.get<Doc & { status: string }>('x402_redemptions', r.body.challenge_id);
        return x?.status === 'failed' && red?.status === 'failed' ? x : null;
      },
      60_000,
    );
    const receipt = await receiptOf(settled.tx_hash);
    expect(receipt!.status).toBe(0); // it landed and reverted: the gas wallet paid for it
    const spent = gasBefore - (await eth.provider.getBalance(gasWallet));
    expect(spent).toBe(receipt!.gasUsed * receipt!.gasPrice);
    // nothing credited, and the gas wallet's loss is booked against it
    expect(await usdc.balanceOf(main.address)).toBe(10_000_000n);
    expect(sysGasBefore - (await account(accountId('sys:gas', ETH)))).toBe(spent);
    const report = await deep();
    expect(report.drifts.filter((d) => d.row === `x402:${r.body.challenge_id}`)).toEqual([]);
  });

  it('a custody move overtaken by the base fee waits for it: the merchant’s own ETH never pays the platform’s gas', async () => {
    const ethBefore = await ethOf(main.id);
    await eth.setAutomine(false);
    let moveId: string;
    try {
      const p = await t.request('POST', '/v1/payouts', {
        key: m.apiKey,
        body: { wallet_id: main.id, amount_subunits: '1000000', token: 'USDC', destination: agent.address },
      });
      expect(p.status).toBe(201);
      expect(p.body.execution).toBe('ledger');
      const move = `custody:${p.body.id}`;
      const topup = await sentRow(`${move}:topup:0`);
      expect(topup.purpose).toBe('custody_topup');
      await eth.mine(); // the top-up lands: the move is sent, pinned to the gas it paid for
      moveId = `${move}:move:0`;
      const sent = await sentRow(moveId);
      const seen = await overtake(BigInt(sent.attempts[0]!.gas_price!), moveId);
      // never replaced above the gas the platform parked for it
      for (const a of seen.attempts) expect(BigInt(a.gas_price!)).toBeLessThanOrEqual(BigInt(sent.attempts[0]!.gas_price!));
    } finally {
      await eth.setAutomine(true);
    }
    await until(
      'the custody move to complete',
      async () => (await store.get<Doc & { status: string }>('custody_moves', moveId!.replace(/:move:0$/, '')))?.status === 'completed',
      60_000,
    );
    expect(await usdc.balanceOf(agent.address)).toBe(1_000_000n);
    // the merchant's ETH is untouched and all there; the platform's parked gas never went below zero
    expect(await ethOf(main.id)).toBe(ethBefore);
    expect(await parked(main.address)).toBeGreaterThanOrEqual(0n);
    expect(await eth.provider.getBalance(main.address)).toBe(ethBefore + (await parked(main.address)));
    expect((await deep()).drifts).toEqual([]);
  });

  it('a payout quoted when gas was cheap and sent when dear: never charged above the quote, never less than the chain took', async () => {
    const ethBefore = await ethOf(main.id);
    const dest = Wallet.createRandom().address;
    await eth.setAutomine(false);
    let p: any;
    try {
      const r = await t.request('POST', '/v1/payouts', {
        key: m.apiKey,
        body: { wallet_id: main.id, amount_subunits: '1000000000000000', token: 'ETH', destination: dest },
      });
      expect(r.status).toBe(201);
      p = r.body;
      const sent = await sentRow(`payout:${p.id}`);
      await overtake(BigInt(sent.attempts[0]!.gas_price!), `payout:${p.id}`);
    } finally {
      await eth.setAutomine(true);
    }
    const done = await until(
      'the payout to complete',
      async () => {
        const x = await get(`/v1/payouts/${p.id}`);
        return x.status === 'completed' ? x : null;
      },
      60_000,
    );
    const receipt = await receiptOf(done.tx_hash);
    const chainFee = receipt!.gasUsed * receipt!.gasPrice;
    expect(BigInt(done.fee_subunits)).toBe(chainFee);
    expect(chainFee).toBeLessThanOrEqual(BigInt(p.fee_subunits));
    expect(await eth.provider.getBalance(dest)).toBe(10n ** 15n);
    expect(await ethOf(main.id)).toBe(ethBefore - 10n ** 15n - chainFee);
    expect(await parked(main.address)).toBeGreaterThanOrEqual(0n);
    expect(await eth.provider.getBalance(main.address)).toBe((await ethOf(main.id)) + (await parked(main.address)));
    expect((await deep()).drifts).toEqual([]);
  });
});
