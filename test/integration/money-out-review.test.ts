/**
 * Acceptance-review probe of issue 9 on a real Hardhat node, through the engines the money-out service
 * runs: the gas top-up of an Ethereum USDC payout is that payout's gas, not the merchant's ETH. While the
 * payout is between its top-up and its transfer, the wallet's available ETH does not include the top-up
 * (an ETH payout in that window would otherwise take the gas and leave the USDC transfer unable to land,
 * holding back the wallet's nonce); once the payout is final the unused part is the wallet's again.
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

describe('Ethereum USDC payout gas top-up (review)', () => {
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
    payouts = new PayoutExecutor({ store, config, broadcaster, driver, gas, pollIntervalMs: 50, retryMs: 50, log: quiet });
    await eth.setBalance(signer.address(gasWalletRef('ethereum', 'testnet')), 10n ** 18n);
  }, 120_000);
  afterAll(async () => {
    await signer?.close();
    await store?.close();
    await closeClients();
    await eth?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the top-up is reserved for the payout until it is final, then the unused gas is the wallet's", async () => {
    const index = 7;
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
    // 10 USDC at the wallet's address and in its ledger (as a confirmed sweep leaves them); no ETH
    await usdc.mint(w.address, 10_000_000n);
    await store.write(
      await transferOps(store, {
        id: 'set:review',
        kind: 'settlement',
        asset: USDC,
        amount: 10_000_000n,
        debit_account: accountId('sys:chain', USDC),
        credit_account: walletAccount(w.id, USDC),
      }),
    );

    // what the wallet may spend in ETH at the moment the top-up is final, before the transfer is signed
    let atTopup: { available: bigint } | null = null;
    broadcaster.afterFinal('payout_topup', async (tx) => {
      atTopup = await balance(store, w.id, ETH);
      await payouts.kick(tx.ref!);
    });

    const id = newId('po');
    const at = new Date().toISOString();
    const dest = Wallet.createRandom().address;
    const doc: PayoutDoc = {
      id,
      merchant_id: 'mer_test',
      wallet_id: w.id,
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
      ...(await payoutOps(store, { payoutId: id, walletId: w.id, asset: USDC, amount: 4_000_000n })),
    ]);

    const done = await until(
      `payout ${id} final`,
      async () => {
        await payouts.scanOnce();
        await broadcaster.scanOnce();
        const p = await store.get<PayoutDoc>(PAYOUTS, id);
        return p && (p.status === 'completed' || p.status === 'failed') ? p : null;
      },
      90_000,
    );
    expect(done.status).toBe('completed');
    expect(await usdc.balanceOf(dest)).toBe(4_000_000n);
    expect(atTopup).toMatchObject({ available: 0n });
    // final: the reservation is released and the gas burnt booked; the left-over is the wallet's, as on chain
    const ethLeft = await eth.provider.getBalance(w.address);
    expect(ethLeft).toBeGreaterThan(0n);
    expect((await balance(store, w.id, ETH)).available).toBe(ethLeft);
    expect((await balance(store, w.id, USDC)).available).toBe(6_000_000n);
    const r = await reconcile({
      store,
      config: loadConfig({ DATA_DIR: dir, ETHEREUM_TESTNET_RPC_URL: eth.url, ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address }),
    });
    expect(r.differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });
});
