/**
 * Custody moves against a real Hardhat node, engines on one store: while a move is unconfirmed,
 * reconciliation counts it in flight (no difference); a node that dies after persisting the top-up, and
 * another after persisting the move itself, leave a move that fresh engines finish, with exactly one
 * top-up and one transfer on chain and the exact amount at the receiving address; the ledger stays sound.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Mnemonic } from 'ethers';
import { loadConfig, type Config } from '../../config/index.ts';
import { openStore, type Store } from '../../lib/store/index.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { Broadcaster } from '../../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../../lib/chains/broadcast/drivers.ts';
import { CHAIN_TXS, type TxDriver } from '../../lib/chains/broadcast/types.ts';
import { GasWallets, gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { CustodyMover } from '../../lib/treasury/custody-mover.ts';
import { reconcile } from '../../lib/treasury/reconcile/wallets.ts';
import { closeClients } from '../../lib/chains/clients.ts';
import {
  LedgerBatch,
  accountId,
  addPayout,
  balance,
  checkStoredLedger,
  parkedGasAccount,
  postedBalance,
  transferOps,
  walletAccount,
  type LedgerAccount,
} from '../../lib/ledger/index.ts';
import { CUSTODY_MOVES, custodyMoveOp, type CustodyMoveDoc } from '../../lib/payouts/custody.ts';
import { newId } from '../../lib/core/ids.ts';
import { startHardhatNode, type HardhatNode, type TestUsdc } from '../harness/hardhat-node.ts';
import { tempDir } from '../helpers/node.ts';
import { until } from './chain-listener-helpers.ts';

const PHRASE = Mnemonic.fromEntropy(randomBytes(16)).phrase;
const USDC = 'ethereum:testnet:USDC';
const ETH = 'ethereum:testnet:ETH';
const quiet = { warn: () => undefined };

describe('custody moves (Hardhat)', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let store: Store;
  let dir: string;
  let signer: PoolSigner;
  let config: Config;
  let driver: (chain: string, network: string) => TxDriver | null;
  let gas: GasWallets;

  beforeAll(async () => {
    eth = await startHardhatNode();
    usdc = await eth.deployTestUsdc();
    dir = tempDir();
    store = await openStore(`sqlite:${join(dir, 's.db')}`);
    config = loadConfig({
      DATA_DIR: dir,
      ETHEREUM_TESTNET_RPC_URL: eth.url,
      ETHEREUM_TESTNET_USDC_ADDRESS: usdc.address,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
    });
    signer = new PoolSigner(PHRASE);
    driver = configuredDrivers(config, signer);
    gas = new GasWallets({ config, keys: signer, log: quiet });
    await eth.setBalance(signer.address(gasWalletRef('ethereum', 'testnet')), 10n ** 18n);
  }, 120_000);
  afterAll(async () => {
    await signer?.close();
    await store?.close();
    await closeClients();
    await eth?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** engines as a node has them; `dies` makes the node stop right after each persisted transaction */
  const engines = (dies: boolean) => {
    const broadcaster = new Broadcaster({ store, driver, pollIntervalMs: 50, rebroadcastMs: 1000, bumpAfterMs: 600_000, log: quiet });
    if (dies) broadcaster.process = async () => null;
    const mover = new CustodyMover({ store, config, broadcaster, driver, gas, pollIntervalMs: 50, retryMs: 50, log: quiet });
    return { broadcaster, mover };
  };
  const wallet = async (index: number) => {
    const w = {
      id: newId('wal'),
      merchant_id: 'mer_test',
      type: index === 1 ? 'merchant' : 'agent',
      name: null,
      chain: 'ethereum' as const,
      network: 'testnet' as const,
      address: signer.address({ role: 'wallet', chain: 'ethereum', index }),
      derivation_index: index,
      is_default: false,
      created_at: new Date().toISOString(),
    };
    await store.write([{ op: 'insert', coll: 'wallets', doc: w }]);
    return w;
  };

  // a row whose step lost a race (the top-up's best-effort after-final kick and the scan both at the move)
  // keeps its claim's lease (30 s for a transaction, 60 s for a move) and is taken again when that expires,
  // as after a node's death: each wait allows one expired lease, and the test both (it timed out at 60 s
  // once in CI and once in 45 local runs; not caught with its rows logged)
  const LEASE_WAIT_MS = 75_000;
  it(
    'in flight for reconciliation; finished exactly once by fresh engines after two crashes',
    async () => {
      const from = await wallet(1);
      const to = await wallet(2);
      // 10 USDC at the sender's address and in its ledger (as a confirmed sweep leaves them)
      await usdc.mint(from.address, 10_000_000n);
      await store.write(
        await transferOps(store, {
          id: 'set:custody',
          kind: 'settlement',
          asset: USDC,
          amount: 10_000_000n,
          debit_account: accountId('sys:chain', USDC),
          credit_account: walletAccount(from.id, USDC),
        }),
      );
      // the internal transfer and its custody move, one write (what lib/payouts/accept.ts commits)
      const payoutId = newId('po');
      const b = new LedgerBatch(store);
      await addPayout(b, { payoutId, walletId: from.id, asset: USDC, amount: 6_000_000n, toWalletId: to.id });
      await store.write([...b.ops(), custodyMoveOp(payoutId, from, to, 'USDC', USDC, 6_000_000n, new Date().toISOString())]);
      expect((await balance(store, to.id, USDC)).available).toBe(6_000_000n);

      const rec = () => reconcile({ store, config });
      const before = await rec();
      expect(before.differences).toEqual([]);
      expect(before.checked).toBeGreaterThanOrEqual(4);

      // node 1 persists the gas top-up and dies before sending it
      const n1 = engines(true);
      await n1.mover.scanOnce();
      let m = (await store.get<CustodyMoveDoc>(CUSTODY_MOVES, `custody:${payoutId}`))!;
      expect(m.status).toBe('topup');
      // node 2 sends and confirms the top-up, persists the move and dies before sending it
      const n2 = engines(true);
      await until(
        'the top-up final and the move persisted',
        async () => {
          await n2.broadcaster.scanOnce();
          await n2.mover.scanOnce();
          m = (await store.get<CustodyMoveDoc>(CUSTODY_MOVES, m.id))!;
          return m.status === 'moving' ? m : null;
        },
        LEASE_WAIT_MS,
      );
      expect(await usdc.balanceOf(to.address)).toBe(0n);
      expect((await rec()).differences).toEqual([]); // still in flight
      // node 3 finishes it
      const n3 = engines(false);
      const done = await until(
        'the custody move completed',
        async () => {
          await n3.mover.scanOnce();
          await n3.broadcaster.scanOnce();
          const x = (await store.get<CustodyMoveDoc>(CUSTODY_MOVES, m.id))!;
          return x.status === 'completed' ? x : null;
        },
        LEASE_WAIT_MS,
      );
      for (let i = 0; i < 3; i++) {
        await n3.mover.scanOnce();
        await n3.broadcaster.scanOnce();
      }
      await eth.mine(2);

      expect(await usdc.balanceOf(to.address)).toBe(6_000_000n);
      expect(await usdc.balanceOf(from.address)).toBe(4_000_000n);
      expect(await eth.provider.getTransactionCount(from.address)).toBe(1); // one transfer from the sender
      const txs = await store.find(CHAIN_TXS, { ref: m.id });
      expect(txs.map((t) => t.id).sort()).toEqual([`${m.id}:move:0`, `${m.id}:topup:0`]);
      expect(done.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
      // the platform paid: the top-up gas left at the sender's address is parked as the platform's, never the sender's
      const ethLeft = await eth.provider.getBalance(from.address);
      expect(ethLeft).toBeGreaterThan(0n);
      expect((await balance(store, from.id, ETH)).available).toBe(0n);
      const parked = await store.get<LedgerAccount>('ledger_accounts', parkedGasAccount(from.address, ETH));
      expect(postedBalance(parked!)).toBe(ethLeft);
      expect(BigInt(done.fee_subunits!)).toBeGreaterThan(0n);
      expect((await rec()).differences).toEqual([]);
      expect((await checkStoredLedger(store)).problems).toEqual([]);
    },
    2 * LEASE_WAIT_MS + 10_000,
  );
});
