/**
 * The money-out engines of a test node run in the test process (the node runs every service but
 * money-out), wired as services/money-out.service.ts wires them, so that a test can put a fault between
 * the engines and the chain: `wrapDriver` replaces a network's transaction driver with a double,
 * `broadcaster` a Broadcaster subclass. Also the reconciliation scanner of that node, raising its alerts
 * through the node's alert pipeline.
 */
import { loadSeedPhrase } from '../../lib/addresses/addresses.ts';
import { PoolSigner } from '../../lib/chains/signer.ts';
import { Broadcaster, type BroadcasterOptions } from '../../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../../lib/chains/broadcast/drivers.ts';
import { CHAIN_TXS, type TxDriver } from '../../lib/chains/broadcast/types.ts';
import { GasWallets } from '../../lib/treasury/gas-wallet.ts';
import { Sweeper, SWEEPS } from '../../lib/treasury/sweeps.ts';
import { PayoutExecutor, type PayoutExecutorDeps } from '../../lib/treasury/payout-executor.ts';
import { feeQuoter } from '../../lib/treasury/fee-quote.ts';
import { refundKind } from '../../lib/refunds/execution.ts';
import { CustodyMover } from '../../lib/treasury/custody-mover.ts';
import { CUSTODY_MOVES } from '../../lib/payouts/custody.ts';
import { ReconcileScanner } from '../../lib/treasury/reconcile/scanner.ts';
import { reconcileMetrics } from '../../lib/treasury/reconcile/metrics.ts';
import { reconciliationDrift, resolveReconciliationDrift } from '../../lib/ops/alerts/index.ts';
import type { TestNode } from './node.ts';
import { SERVICE_FACTORIES } from '../../services/index.ts';

const quiet = { warn: () => undefined, info: () => undefined };

export interface EngineOptions {
  wrapDriver?: (d: TxDriver, chain: string, network: string) => TxDriver;
  broadcaster?: new (o: BroadcasterOptions) => Broadcaster;
  /** new transactions per stage before a custody move fails for good (default 5) */
  custodyMaxAttempts?: number;
  pollIntervalMs?: number;
}

export interface Engines {
  signer: PoolSigner;
  broadcaster: Broadcaster;
  sweeper: Sweeper;
  payouts: PayoutExecutor;
  custody: CustodyMover;
  scanner: ReconcileScanner;
  /** one round of every engine */
  round(): Promise<void>;
  /** rounds until no sweep, custody move or transaction is still under way */
  settle(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function startEngines(t: TestNode, o: EngineOptions = {}): Engines {
  const rt = t.node.rt;
  const signer = new PoolSigner(loadSeedPhrase(t.dataDir).phrase);
  const base = configuredDrivers(rt.config, signer);
  const cache = new Map<string, TxDriver | null>();
  const driver = (chain: string, network: string) => {
    const k = `${chain}:${network}`;
    if (!cache.has(k)) {
      const d = base(chain, network);
      cache.set(k, d && o.wrapDriver ? o.wrapDriver(d, chain, network) : d);
    }
    return cache.get(k)!;
  };
  const pollIntervalMs = o.pollIntervalMs ?? 100;
  const gas = new GasWallets({ config: rt.config, keys: signer, log: quiet });
  const B = o.broadcaster ?? Broadcaster;
  const broadcaster = new B({ store: rt.store, driver, pollIntervalMs, rebroadcastMs: 2_000, bumpAfterMs: 600_000, log: quiet });
  const common: PayoutExecutorDeps = {
    store: rt.store,
    config: rt.config,
    broadcaster,
    driver,
    gas,
    quoteFee: feeQuoter(rt.config),
    pollIntervalMs,
    retryMs: pollIntervalMs,
    log: quiet,
  };
  const sweeper = new Sweeper(common);
  const payouts = new PayoutExecutor(common);
  const refunds = new PayoutExecutor(common, refundKind(rt.store));
  const custody = new CustodyMover({ ...common, maxAttempts: o.custodyMaxAttempts });
  const scanner = new ReconcileScanner({
    store: rt.store,
    config: rt.config,
    keys: signer,
    now: () => rt.now(),
    nodeId: 'test-reconciler',
    intervalMs: 60_000,
    addressBudget: 50,
    maxBlocks: 200,
    metrics: reconcileMetrics(rt.metrics.registry),
    raise: (d) => reconciliationDrift(rt, d).then(() => undefined),
    resolve: (d) => resolveReconciliationDrift(rt, d, 'resolved').then(() => undefined),
    log: quiet,
  });
  for (const e of [broadcaster, sweeper, payouts, refunds, custody]) e.start();
  const round = async () => {
    await sweeper.scanOnce();
    await custody.scanOnce();
    await payouts.scanOnce();
    await refunds.scanOnce();
    await broadcaster.scanOnce();
  };
  return {
    signer,
    broadcaster,
    sweeper,
    payouts,
    custody,
    scanner,
    round,
    async settle(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        await round();
        const busy =
          (await rt.store.count(CHAIN_TXS, { status: { $in: ['signed', 'sent'] } })) +
          (await rt.store.count(SWEEPS, { status: { $in: ['waiting', 'topup', 'moving'] } })) +
          (await rt.store.count(CUSTODY_MOVES, { status: { $in: ['waiting', 'topup', 'moving'] } })) +
          (await rt.store.count('payouts', { execution: 'chain', status: { $in: ['pending', 'processing'] } })) +
          (await rt.store.count('refunds', { execution: 'chain', status: { $in: ['pending', 'processing'] } }));
        if (!busy) return;
        if (Date.now() > deadline) throw new Error(`money out did not settle: ${busy} rows under way`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await Promise.all([broadcaster.stop(), sweeper.stop(), payouts.stop(), refunds.stop(), custody.stop(), scanner.stop()]);
      await signer.close();
    },
  };
}

/** every service but money-out (its engines run in the test: startEngines) */
export const SERVICES_WITHOUT_MONEY_OUT = Object.keys(SERVICE_FACTORIES)
  .filter((n) => n !== 'money-out')
  .join(',');
