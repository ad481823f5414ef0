/**
 * Sweeps and on-chain payouts on real chains (Hardhat node with TestUSDC, LiteSVM with an SPL mint),
 * driven through the engines the money-out service runs: a pending settlement is swept from its deposit
 * address into the wallet's address and posted; a payout of part of it reaches an external address with
 * the exact amount and completes with its ledger posting, fee and webhook in one write; reconciliation
 * finds ledger and chain equal, and a planted difference.
 */
import { randomBytes } from 'node:crypto';
import { Mnemonic, Wallet } from 'ethers';
import type { Store } from '../../lib/store/index.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { Broadcaster } from '../../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../../lib/chains/broadcast/drivers.ts';
import { GasWallets, gasWalletRef } from '../../lib/treasury/gas-wallet.ts';
import { SWEEPS, Sweeper, type SweepDoc } from '../../lib/treasury/sweeps.ts';
import { feeQuoter } from '../../lib/treasury/fee-quote.ts';
import { PayoutExecutor } from '../../lib/treasury/payout-executor.ts';
import { reconcile } from '../../lib/treasury/reconcile/wallets.ts';
import { moneyOutMetrics } from '../../lib/chains/metrics.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../lib/chains/broadcast/types.ts';
import { Registry } from 'prom-client';
import { accountId, balance, payoutOps, settlementOps, checkStoredLedger, transferOps, walletAccount } from '../../lib/ledger/index.ts';
import { PAYOUTS, type PayoutDoc } from '../../lib/payouts/model.ts';
import { newId } from '../../lib/core/ids.ts';
import type { HardhatNode, TestUsdc } from '../harness/hardhat-node.ts';
import type { SolanaRpcHarness, MintInfo } from '../harness/solana-rpc.ts';
import { startChainEnv, type ChainEnv } from '../helpers/chain-env.ts';
import { until } from './chain-listener-helpers.ts';

const PHRASE = Mnemonic.fromEntropy(randomBytes(16)).phrase;

describe('sweeps and on-chain payouts', () => {
  let eth: HardhatNode;
  let usdc: TestUsdc;
  let sol: SolanaRpcHarness;
  let mint: MintInfo;
  let store: Store;
  let signer: PoolSigner;
  let config: ChainEnv['config'];
  let env: ChainEnv | undefined;
  let broadcaster: Broadcaster;
  let sweeper: Sweeper;
  let payouts: PayoutExecutor;
  let nextIndex = 10;
  const quiet = { warn: () => undefined };

  beforeAll(async () => {
    env = await startChainEnv(PHRASE);
    ({ eth, usdc, sol, mint, store, signer, config } = env);
    const driver = configuredDrivers(config, signer);
    const gas = new GasWallets({ config, keys: signer, log: quiet });
    broadcaster = new Broadcaster({ store, driver, pollIntervalMs: 50, rebroadcastMs: 1000, bumpAfterMs: 600_000, log: quiet });
    sweeper = new Sweeper({ store, config, broadcaster, driver, gas, pollIntervalMs: 50, retryMs: 50, log: quiet });
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
    await sol.airdrop(signer.address(gasWalletRef('solana', 'testnet')), 5_000_000_000n);
  }, 120_000);
  afterAll(async () => {
    await env?.close();
  });

  const round = async () => {
    await sweeper.scanOnce();
    await payouts.scanOnce();
    await broadcaster.scanOnce();
  };

  /** a session's deposit address, its counted deposit and its pending settlement (what the session actor writes) */
  async function settledDeposit(
    chain: 'ethereum' | 'solana',
    token: string,
    walletId: string,
    amount: bigint,
    pay: (address: string) => Promise<string>,
  ) {
    const index = nextIndex++;
    const address = signer.address({ role: 'deposit', chain, index });
    const sessionId = newId('ps');
    const tx = await pay(address);
    const key = `${chain}:testnet:${tx}:0`;
    await store.write([
      { op: 'insert', coll: 'payment_sessions', doc: { id: sessionId, address, address_index: index, chain, network: 'testnet', token } },
      { op: 'insert', coll: 'deposits', doc: { id: key, status: 'credited', session_id: sessionId } },
      ...(await settlementOps(store, { depositKey: key, walletId, asset: `${chain}:testnet:${token}`, amount, sessionId, txHash: tx })),
    ]);
    return { sessionId, key, address };
  }

  async function wallet(chain: 'ethereum' | 'solana') {
    const index = nextIndex++;
    const doc = {
      id: newId('wal'),
      merchant_id: 'mer_test',
      type: 'merchant',
      name: null,
      chain,
      network: 'testnet',
      address: signer.address({ role: 'wallet', chain, index }),
      derivation_index: index,
      is_default: false,
      created_at: new Date().toISOString(),
    };
    await store.write([{ op: 'insert', coll: 'wallets', doc }]);
    return doc;
  }

  /** native coin at the wallet's address and in its ledger: what its payouts' network fees are paid from */
  async function fundNative(w: { id: string; chain: 'ethereum' | 'solana'; address: string }, amount: bigint) {
    const asset = w.chain === 'ethereum' ? 'ethereum:testnet:ETH' : 'solana:testnet:SOL';
    if (w.chain === 'ethereum') await eth.setBalance(w.address, (await eth.provider.getBalance(w.address)) + amount);
    else await sol.airdrop(w.address, amount);
    await store.write(
      await transferOps(store, {
        id: `fund:${w.id}:${amount}`,
        kind: 'deposit',
        asset,
        amount,
        debit_account: accountId('sys:chain', asset),
        credit_account: walletAccount(w.id, asset),
      }),
    );
  }

  async function payout(
    w: { id: string; chain: 'ethereum' | 'solana' },
    token: string,
    amount: bigint,
    destination: string,
  ): Promise<string> {
    const id = newId('po');
    const at = new Date().toISOString();
    const doc: PayoutDoc = {
      id,
      merchant_id: 'mer_test',
      wallet_id: w.id,
      chain: w.chain,
      network: 'testnet',
      token,
      asset: `${w.chain}:testnet:${token}`,
      amount_subunits: amount.toString(),
      destination,
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
      ...(await payoutOps(store, { payoutId: id, walletId: w.id, asset: doc.asset, amount })),
    ]);
    return id;
  }

  const sweepOf = async (sessionId: string) =>
    until(
      `sweep of ${sessionId}`,
      async () => {
        await round();
        const [s] = await store.find<SweepDoc>(SWEEPS, { session_id: sessionId });
        return s?.status === 'completed' ? s : null;
      },
      60_000,
    );

  const completed = async (id: string) =>
    until(
      `payout ${id} final`,
      async () => {
        await round();
        const p = await store.get<PayoutDoc>(PAYOUTS, id);
        return p && (p.status === 'completed' || p.status === 'failed') ? p : null;
      },
      60_000,
    );

  it('Ethereum USDC: tops up gas, sweeps into the wallet, posts the settlement; a payout arrives exactly', async () => {
    const w = await wallet('ethereum');
    const { sessionId } = await settledDeposit('ethereum', 'USDC', w.id, 10_000_000n, async (a) => (await usdc.mint(a, 10_000_000n)).hash);
    expect(await balance(store, w.id, 'ethereum:testnet:USDC')).toMatchObject({ available: 0n, pending: 10_000_000n });
    const s = await sweepOf(sessionId);
    expect(s.topup_tx).toBeTruthy();
    expect(await usdc.balanceOf(w.address)).toBe(10_000_000n);
    expect(await balance(store, w.id, 'ethereum:testnet:USDC')).toMatchObject({ available: 10_000_000n, pending: 0n });
    // the top-up's gas is parked at the deposit address as the platform's: none of it reached the wallet
    expect(await balance(store, w.id, 'ethereum:testnet:ETH')).toMatchObject({ available: 0n });

    const dest = Wallet.createRandom().address;
    await fundNative(w, 10n ** 16n); // the merchant pays the payout's gas (fee policy)
    const id = await payout(w, 'USDC', 3_250_000n, dest);
    const p = await completed(id);
    expect(p).toMatchObject({ status: 'completed', tx_hash: expect.stringMatching(/^0x/) });
    expect((await balance(store, w.id, 'ethereum:testnet:ETH')).available).toBe(10n ** 16n - BigInt(p.fee_subunits!));
    expect(await usdc.balanceOf(dest)).toBe(3_250_000n);
    expect(await balance(store, w.id, 'ethereum:testnet:USDC')).toMatchObject({ available: 6_750_000n });
    const [ev] = await store.find<{ body: { event_type: string; tx_hash: string } } & { id: string }>('webhook_events', { payout_id: id });
    expect(ev!.body).toMatchObject({ event_type: 'payout.completed', tx_hash: p.tx_hash });
    // the wallet's ETH and USDC match the chain exactly
    const r = await reconcile({ store, config });
    expect(r.differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
  });

  it('Ethereum ETH: the sweep pays its gas from the amount (booked as a fee); a payout arrives exactly', async () => {
    const w = await wallet('ethereum');
    const { sessionId } = await settledDeposit(
      'ethereum',
      'ETH',
      w.id,
      5n * 10n ** 16n,
      async (a) => (await eth.sendEth(0, a, 5n * 10n ** 16n)).hash,
    );
    const s = await sweepOf(sessionId);
    const onChain = await eth.provider.getBalance(w.address);
    expect(onChain).toBe(5n * 10n ** 16n - BigInt(s.fee_subunits!));
    expect((await balance(store, w.id, 'ethereum:testnet:ETH')).available).toBe(onChain);
    const dest = Wallet.createRandom().address;
    const id = await payout(w, 'ETH', 10n ** 16n, dest);
    const p = await completed(id);
    expect(p.status).toBe('completed');
    expect(await eth.provider.getBalance(dest)).toBe(10n ** 16n);
    expect((await balance(store, w.id, 'ethereum:testnet:ETH')).available).toBe(await eth.provider.getBalance(w.address));
    expect((await reconcile({ store, config })).differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
  });

  it('Solana USDC and SOL: the gas wallet pays the sweeps, the wallet its payouts (fee and rent); payouts arrive exactly', async () => {
    const w = await wallet('solana');
    const usdcDep = await settledDeposit('solana', 'USDC', w.id, 8_000_000n, (a) => sol.mintTo(mint.mint, a, 8_000_000n));
    const solDep = await settledDeposit('solana', 'SOL', w.id, 500_000_000n, (a) => sol.airdrop(a, 500_000_000n));
    await sweepOf(usdcDep.sessionId);
    await sweepOf(solDep.sessionId);
    expect(await sol.tokenBalance(w.address, mint.mint)).toBe(8_000_000n);
    expect(sol.balance(w.address)).toBe(500_000_000n);
    const dest = (await sol.newWallet(0n)).address;
    const a = await payout(w, 'USDC', 2_500_000n, dest);
    const b = await payout(w, 'SOL', 200_000_000n, dest);
    expect((await completed(a)).status).toBe('completed');
    expect((await completed(b)).status).toBe('completed');
    expect(await sol.tokenBalance(dest, mint.mint)).toBe(2_500_000n);
    expect(sol.balance(dest)).toBe(200_000_000n);
    expect(await balance(store, w.id, 'solana:testnet:USDC')).toMatchObject({ available: 5_500_000n });
    // the merchant paid both payouts' fees (5,000 lamports each: the wallet is its own fee payer) and the
    // rent of the destination's new token account (2,039,280 lamports), exactly what its address spent
    expect(await balance(store, w.id, 'solana:testnet:SOL')).toMatchObject({ available: 300_000_000n - 10_000n - 2_039_280n });
    expect(sol.balance(w.address)).toBe(300_000_000n - 10_000n - 2_039_280n);
    expect((await reconcile({ store, config })).differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
  });

  it('a sweep waits while the gas wallet is empty (says why, counts it), then goes on once it is funded', async () => {
    const gasAddress = signer.address(gasWalletRef('solana', 'testnet'));
    const before = sol.balance(gasAddress);
    // empty the gas wallet: move everything to a throwaway key (the fee payer pays for itself)
    const drain = new Broadcaster({
      store,
      driver: configuredDrivers(config, signer),
      pollIntervalMs: 50,
      rebroadcastMs: 1000,
      bumpAfterMs: 600_000,
      log: quiet,
    });
    await drain.create({
      id: 'drain',
      chain: 'solana',
      network: 'testnet',
      purpose: 'test',
      intent: {
        chain: 'solana',
        kind: 'native',
        from: gasWalletRef('solana', 'testnet'),
        to: (await sol.newWallet(0n)).address,
        lamports: (before - 5_000n).toString(),
        fee_payer: gasWalletRef('solana', 'testnet'),
      },
    });
    await until('the drain', async () => {
      await drain.scanOnce();
      return sol.balance(gasAddress) === 0n;
    });
    const metrics = moneyOutMetrics(new Registry());
    const warnings: string[] = [];
    const gas = new GasWallets({ config, keys: signer, metrics, log: { warn: (m: unknown) => warnings.push(String(m)) } });
    const waiting = new Sweeper({
      store,
      config,
      broadcaster,
      driver: configuredDrivers(config, signer),
      gas,
      pollIntervalMs: 50,
      retryMs: 50,
      log: { warn: (m: unknown) => warnings.push(String(m)) },
    });
    const w = await wallet('solana');
    const { sessionId } = await settledDeposit('solana', 'SOL', w.id, 300_000_000n, (a) => sol.airdrop(a, 300_000_000n));
    const [s] = await until('a waiting sweep', async () => {
      await waiting.scanOnce();
      const found = await store.find<SweepDoc>(SWEEPS, { session_id: sessionId });
      return found[0]?.waiting_reason === 'gas_wallet_empty' ? found : null;
    });
    expect(s!.status).toBe('waiting');
    expect(warnings.some((x) => /gas wallet solana testnet .* needs/.test(x))).toBe(true);
    expect((await metrics.gasWalletLow.get()).values[0]!.value).toBeGreaterThan(0);
    expect(await balance(store, w.id, 'solana:testnet:SOL')).toMatchObject({ pending: 300_000_000n, available: 0n });
    await sol.airdrop(gasAddress, 1_000_000_000n);
    await sweepOf(sessionId);
    expect(sol.balance(w.address)).toBe(300_000_000n);
  });

  it('a sweep left half done by a dead node (top-up signed, never sent) is finished by new engines, once', async () => {
    const w = await wallet('ethereum');
    const { sessionId, address } = await settledDeposit(
      'ethereum',
      'USDC',
      w.id,
      2_000_000n,
      async (a) => (await usdc.mint(a, 2_000_000n)).hash,
    );
    // the "dead" node: discovers the sweep and signs its top-up, but never broadcasts anything
    const deadDriver = configuredDrivers(config, signer);
    const dead = new Broadcaster({ store, driver: deadDriver, pollIntervalMs: 50, rebroadcastMs: 1000, bumpAfterMs: 600_000, log: quiet });
    dead.process = async () => null; // killed right after the signed row was committed
    const deadSweeper = new Sweeper({
      store,
      config,
      broadcaster: dead,
      driver: deadDriver,
      gas: new GasWallets({ config, keys: signer }),
      pollIntervalMs: 50,
      log: quiet,
    });
    await deadSweeper.scanOnce();
    const [half] = await store.find<SweepDoc>(SWEEPS, { session_id: sessionId });
    expect(half).toMatchObject({ status: 'topup' });
    const topup = (await store.get<ChainTxDoc>(CHAIN_TXS, half!.topup_tx!))!;
    expect(topup.status).toBe('signed');
    expect(await eth.provider.getBalance(address)).toBe(0n);
    // the engines of a live node take over
    const s = await sweepOf(sessionId);
    expect(s.topup_tx).toBe(half!.topup_tx);
    expect((await store.get<ChainTxDoc>(CHAIN_TXS, s.topup_tx!))!.attempts).toHaveLength(1);
    expect(await usdc.balanceOf(w.address)).toBe(2_000_000n);
    expect(await store.count(SWEEPS, { session_id: sessionId })).toBe(1);
  });

  it('an ETH payout whose wallet cannot also pay the gas fails at once and its amount is available again', async () => {
    const w = await wallet('ethereum');
    const { sessionId } = await settledDeposit(
      'ethereum',
      'ETH',
      w.id,
      2n * 10n ** 16n,
      async (a) => (await eth.sendEth(3, a, 2n * 10n ** 16n)).hash,
    );
    await sweepOf(sessionId);
    const all = (await balance(store, w.id, 'ethereum:testnet:ETH')).available;
    const id = await payout(w, 'ETH', all, Wallet.createRandom().address);
    const p = await completed(id);
    expect(p).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/network fee/) });
    expect((await balance(store, w.id, 'ethereum:testnet:ETH')).available).toBe(all);
    expect(await eth.provider.getTransactionCount(w.address)).toBe(0);
    const [ev] = await store.find<{ id: string; body: { event_type: string } }>('webhook_events', { payout_id: id });
    expect(ev!.body.event_type).toBe('payout.failed');
  });

  it('a SOL payout the chain would refuse (below the rent-exempt minimum) fails at once, amount available again', async () => {
    const w = await wallet('solana');
    const { sessionId } = await settledDeposit('solana', 'SOL', w.id, 100_000_000n, (a) => sol.airdrop(a, 100_000_000n));
    await sweepOf(sessionId);
    const tooSmall = await payout(w, 'SOL', 500_000n, (await sol.newWallet(0n)).address);
    expect(await completed(tooSmall)).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringMatching(/new Solana account must receive at least 0\.00089088 SOL/),
    });
    const strands = await payout(w, 'SOL', 99_500_000n, (await sol.newWallet(0n)).address);
    expect(await completed(strands)).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/rent-exempt minimum/) });
    expect(await balance(store, w.id, 'solana:testnet:SOL')).toMatchObject({ available: 100_000_000n });
    expect(sol.balance(w.address)).toBe(100_000_000n);
  });

  it('a SOL sweep takes uncounted dust along when it could not stay behind, and books it to the wallet', async () => {
    const w = await wallet('solana');
    const { sessionId, address } = await settledDeposit('solana', 'SOL', w.id, 300_000_000n, (a) => sol.airdrop(a, 300_000_000n));
    await sol.airdrop(address, 1_000n); // dust nobody counted (below the rent-exempt minimum on its own)
    const s = await sweepOf(sessionId);
    expect(s.extra_subunits).toBe('1000');
    expect(sol.balance(address)).toBe(0n);
    expect(sol.balance(w.address)).toBe(300_001_000n);
    expect(await balance(store, w.id, 'solana:testnet:SOL')).toMatchObject({ available: 300_001_000n });
    expect((await reconcile({ store, config })).differences.filter((d) => d.wallet_id === w.id)).toEqual([]);
  });

  it('reconciliation lists a planted difference', async () => {
    const w = await wallet('ethereum');
    await usdc.mint(w.address, 1234n); // money the ledger does not know about
    const r = await reconcile({ store, config });
    expect(r.differences).toContainEqual(
      expect.objectContaining({
        wallet_id: w.id,
        token: 'USDC',
        ledger_subunits: '0',
        chain_subunits: '1234',
        difference_subunits: '1234',
      }),
    );
  });

  it('keeps the ledger invariants', async () => {
    const check = await checkStoredLedger(store);
    expect(check).toMatchObject({ ok: true });
  });
});
