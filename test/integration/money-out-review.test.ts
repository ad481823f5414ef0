/**
 * The fee policy on a real Hardhat node, through the engines the money-out service runs (issue 18): an
 * Ethereum USDC payout is paid for by its own wallet. No platform top-up reaches the wallet (the old
 * top-up's unused gas became the merchant's ETH: gas farming); a payout written without a fee quote (as
 * an agent spend is) is quoted and reserved when signed, and fails, sending nothing, when the wallet holds
 * no ETH for its gas; with ETH, the gas wallet pays nothing and the wallet is charged exactly the gas burnt.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Mnemonic, Wallet } from 'ethers';
import { loadConfig } from '../../config/index.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { Broadcaster } from '../../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../../lib/chains/broadcast/drivers.ts';
import { GasWallets, gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { feeQuoter } from '../../lib/treasury/fee-quote.ts';
import { PayoutExecutor } from '../../lib/treasury/payout-executor.ts';
import { reconcile } from '../../lib/treasury/reconcile/wallets.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import { accountId, balance, checkStoredLedger, payoutOps, transferOps, walletAccount } from '../../lib/ledger/index.ts';
import { PAYOUTS, type PayoutDoc } from '../../lib/payouts/model.ts';
import { newId } from '../../lib/core/ids.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { tempDir } from '../helpers/node.ts';
import { until } from './chain-listener-helpers.ts';

const PHRASE = Mnemonic.fromEntropy(randomBytes(16)).phrase;
const ETH = 'ethereum:testnet:ETH';
const USDC = 'ethereum:testnet:USDC';

describe('Ethereum USDC payout paid by its wallet (fee policy)', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let store: Store;
  let dir: string;
  let signer: PoolSigner;
  let broadcaster: Broadcaster;
  let payouts: PayoutExecutor;
  const quiet = { warn: () => undefined };

  beforeAll(async () => {
    eth = await startHardhatNode();
    usdc = await eth.deployTestUsdc();
    dir = tempDir();
    store = await openStore(`sqlite:${join(dir, 's.db')}`);
    const config = loadConfig({
      DATA_DIR: dir,
      ETHEREUM_TESTNET_RPC_URL: eth.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    });
    signer = new PoolSigner(PHRASE);
    const driver = configuredDrivers(config, signer);
    const gas = new GasWallets({ config, keys: signer, log: quiet });
    broadcaster = new Broadcaster({ store, driver, pollIntervalMs: 50, rebroadcastMs: 1000, bumpAfterMs: 600_000, log: quiet });
    payouts = new PayoutExecutor({
      store,
      config,
      broadcaster,
      driver,
      gas,
      quoteFee: feeQuoter(config),
      pollIntervalMs: 50,
      retryMs: 50,
      log: quiet,
    });
    await eth.setBalance(signer.address(gasWalletRef('ethereum', 'testnet')), 10n ** 18n);
  }, 120_000);
  afterAll(async () => {
    await signer?.close();
    await store?.close();
    await closeClients();
    await eth?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const newWallet = async (index: number) => {
    const w = {
      id: newId('wal'),
      merchant_id: 'mer_test',
      type: 'merchant',
      name: null,
      chain: 'ethereum',
      network: 'testnet',
      address: signer.address({ role: 'wallet', chain: 'ethereum', index }),
      derivation_index: index,
      is_default: false,
      created_at: new Date().toISOString(),
    };
    await store.write([{ op: 'insert', coll: 'wallets', doc: w }]);
    // 10 USDC at the wallet's address and in its ledger (as a confirmed sweep leaves them)
    await usdc.mint(w.address, 10_000_000n);
    await store.write(
      await transferOps(store, {
        id: `set:review:${index}`,
        kind: 'settlement',
        asset: USDC,
        amount: 10_000_000n,
        debit_account: accountId('sys:chain', USDC),
        credit_account: walletAccount(w.id, USDC),
      }),
    );
    return w;
  };
  /** a payout as an agent spend writes it: no fee quote, no fee reservation */
  const payout = async (walletId: string, dest: string) => {
    const id = newId('po');
    const at = new Date().toISOString();
    const doc: PayoutDoc = {
      id,
      merchant_id: 'mer_test',
      wallet_id: walletId,
      chain: 'ethereum',
      network: 'testnet',
      token: 'USDC',
      asset: USDC,
      amount_subunits: '4000000',
      destination: dest,
      destination_wallet_id: null,
      status: 'pending',
      execution: 'chain',
      simulated: false,
      tx_hash: null,
      fee_subunits: null,
      failure_reason: null,
      metadata: null,
      next_attempt_at: at,
      created_at: at,
      updated_at: at,
      completed_at: null,
    };
    await store.write([
      { op: 'insert', coll: PAYOUTS, doc },
      ...(await payoutOps(store, { payoutId: id, walletId, asset: USDC, amount: 4_000_000n })),
    ]);
    return until(
      `payout ${id} final`,
      async () => {
        await payouts.scanOnce();
        await broadcaster.scanOnce();
        const p = await store.get<PayoutDoc>(PAYOUTS, id);
        return p && (p.status === 'completed' || p.status === 'failed') ? p : null;
      },
      90_000,
    );
  };
  const gasWallet = () => eth.provider.getBalance(signer.address(gasWalletRef('ethereum', 'testnet')));

  it('a wallet without ETH cannot have its USDC payout paid by the platform: it fails, nothing is sent', async () => {
    const w = await newWallet(7);
    const gasBefore = await gasWallet();
    const dest = Wallet.createRandom().address;
    const done = await payout(w.id, dest);
    expect(done.status).toBe('failed');
    expect(done.failure_reason).toMatch(/insufficient available ETH for the network fee/);
    expect(await usdc.balanceOf(dest)).toBe(0n);
    expect(await eth.provider.getBalance(w.address)).toBe(0n); // no top-up parked there
    expect(await gasWallet()).toBe(gasBefore);
    expect((await balance(store, w.id, USDC)).available).toBe(10_000_000n);
    expect((await balance(store, w.id, ETH)).available).toBe(0n);
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });

  it("with ETH in the wallet, the payout burns the wallet's own gas and is charged exactly that; the gas wallet pays nothing", async () => {
    const w = await newWallet(8);
    const funded = 10n ** 16n;
    await eth.setBalance(w.address, funded);
    await store.write(
      await transferOps(store, {
        id: 'dep:review:eth',
        kind: 'deposit',
        asset: ETH,
        amount: funded,
        debit_account: accountId('sys:chain', ETH),
        credit_account: walletAccount(w.id, ETH),
      }),
    );
    const gasBefore = await gasWallet();
    const dest = Wallet.createRandom().address;
    const done = await payout(w.id, dest);
    expect(done.status).toBe('completed');
    expect(await usdc.balanceOf(dest)).toBe(4_000_000n);
    const receipt = await eth.provider.getTransactionReceipt(done.tx_hash!);
    const burnt = receipt!.gasUsed * receipt!.gasPrice;
    expect(done.fee_subunits).toBe(burnt.toString());
    const ethLeft = await eth.provider.getBalance(w.address);
    expect(ethLeft).toBe(funded - burnt);
    expect((await balance(store, w.id, ETH)).available).toBe(ethLeft);
    expect((await balance(store, w.id, USDC)).available).toBe(6_000_000n);
    expect(await gasWallet()).toBe(gasBefore);
    const r = await reconcile({
      store,
      config: loadConfig({ DATA_DIR: dir, ETHEREUM_TESTNET_RPC_URL: eth.url, ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address }),
    });
    expect(r.differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });
});
