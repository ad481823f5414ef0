/**
 * Money out on chain (README "Sweeps, payouts and gas wallets"): the transaction outbox, sweeps of
 * deposit addresses into merchant wallets and on-chain payout and refund execution, each a due-scanner over its
 * store rows, so every node running this service shares the work and resumes what a dead node left.
 * `money-out.scan` runs one round of everything now (tests, operators); `money-out.status` counts rows.
 * The continuous reconciliation scanner (lib/treasury/reconcile/scanner.ts) runs here too, one node at a
 * time under its lease; `money-out.reconcile` runs one tick of it now.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { PoolSigner } from '../lib/chains/signer.ts';
import { Broadcaster } from '../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../lib/chains/broadcast/drivers.ts';
import { feeQuoter } from '../lib/treasury/fee-quote.ts';
import { CHAIN_TXS } from '../lib/chains/broadcast/types.ts';
import { GasWallets } from '../lib/treasury/gas-wallet.ts';
import { moneyOutMetrics } from '../lib/chains/metrics.ts';
import { SWEEPS, Sweeper } from '../lib/treasury/sweeps.ts';
import { PayoutExecutor, type PayoutExecutorDeps } from '../lib/treasury/payout-executor.ts';
import { CustodyMover } from '../lib/treasury/custody-mover.ts';
import { refundKind } from '../lib/refunds/execution.ts';

import { CUSTODY_MOVES } from '../lib/payouts/custody.ts';
import { rpcErrorText } from '../lib/chains/clients.ts';
import { ReconcileScanner } from '../lib/treasury/reconcile/scanner.ts';
import { reconcileMetrics } from '../lib/treasury/reconcile/metrics.ts';
import { reconciliationDrift, resolveReconciliationDrift } from '../lib/ops/alerts/index.ts';

const GAS_CHECK_EVERY_MS = 5 * 60_000;

export function createMoneyOutService(rt: Runtime): ServiceSchema {
  let signer: PoolSigner | null = null;
  let broadcaster: Broadcaster | null = null;
  let sweeper: Sweeper | null = null;
  let payouts: PayoutExecutor | null = null;
  let refunds: PayoutExecutor | null = null;
  let custody: CustodyMover | null = null;
  let reconciler: ReconcileScanner | null = null;
  let gasTimer: NodeJS.Timeout | null = null;
  const cfg = rt.config.moneyOut;
  const anyChain = () => Object.values(rt.config.chains).some((c) => c.testnet.rpcUrl || c.mainnet.rpcUrl);

  return {
    name: 'money-out',
    actions: {
      /** one round now: find new sweeps, advance sweeps and payouts, check outgoing transactions */
      scan: {
        visibility: 'public',
        async handler() {
          if (!broadcaster) return { sweeps: 0, payouts: 0, refunds: 0, custody_moves: 0, transactions: 0 };
          const s = await sweeper!.scanOnce();
          const c = await custody!.scanOnce();
          const p = await payouts!.scanOnce();
          const r = await refunds!.scanOnce();
          const t = await broadcaster.scanOnce();
          return { sweeps: s, payouts: p, refunds: r, custody_moves: c, transactions: t };
        },
      },
      /** one reconciliation tick now (null when another node holds the reconciliation lease) */
      reconcile: {
        visibility: 'public',
        handler() {
          return reconciler ? reconciler.runOnce() : null;
        },
      },
      status: {
        visibility: 'public',
        async handler() {
          const count = (coll: string, status: string) => rt.store.count(coll, { status });
          return {
            transactions: Object.fromEntries(
              await Promise.all(['signed', 'sent', 'confirmed', 'failed'].map(async (s) => [s, await count(CHAIN_TXS, s)])),
            ),
            sweeps: Object.fromEntries(
              await Promise.all(['waiting', 'topup', 'moving', 'completed', 'failed'].map(async (s) => [s, await count(SWEEPS, s)])),
            ),
            custody_moves: Object.fromEntries(
              await Promise.all(['waiting', 'topup', 'moving', 'completed', 'failed'].map(async (s) => [s, await count(CUSTODY_MOVES, s)])),
            ),
          };
        },
      },
    },
    events: {
      /** a payout or refund was just accepted: start it (or its custody move) now (at-most-once is fine, the scanners catch up) */
      'money-out.nudge': {
        handler(ctx: Context<{ payout_id?: unknown; refund_id?: unknown; custody?: unknown }>) {
          if (typeof ctx.params?.refund_id === 'string') void refunds?.kick(ctx.params.refund_id).catch(() => undefined);
          if (typeof ctx.params?.payout_id !== 'string') return;
          if (ctx.params.custody === true) void custody?.kick(`custody:${ctx.params.payout_id}`).catch(() => undefined);
          else if (payouts) void payouts.kick(ctx.params.payout_id).catch(() => undefined);
        },
      },
    },
    async started(this: { logger: { warn(...a: unknown[]): void; info(...a: unknown[]): void }; broker: { nodeID: string } }) {
      if (!anyChain()) return; // nothing to send anywhere: no pool, no timers
      const log = this.logger;
      signer = new PoolSigner(loadSeedPhrase(rt.config.dataDir).phrase);
      const metrics = moneyOutMetrics(rt.metrics.registry);
      const driver = configuredDrivers(rt.config, signer);
      const gas = new GasWallets({ config: rt.config, keys: signer, metrics, log });
      const now = () => rt.now();
      broadcaster = new Broadcaster({
        store: rt.store,
        driver,
        pollIntervalMs: cfg.pollIntervalMs,
        rebroadcastMs: cfg.rebroadcastMs,
        bumpAfterMs: cfg.bumpAfterMs,
        now,
        log,
        metrics,
      });
      // the three treasury engines share one set of dependencies (lib/treasury/engine-deps.ts)
      const deps: PayoutExecutorDeps = {
        store: rt.store,
        config: rt.config,
        broadcaster,
        driver,
        gas,
        quoteFee: feeQuoter(rt.config),
        pollIntervalMs: cfg.pollIntervalMs,
        now,
        log,
      };
      sweeper = new Sweeper(deps);
      payouts = new PayoutExecutor(deps);
      // refunds are paid out of the settlement wallet by the same executor, as a kind of their own
      refunds = new PayoutExecutor(deps, refundKind(rt.store));
      custody = new CustodyMover(deps);
      broadcaster.start();
      payouts.start();
      refunds.start();
      custody.start();
      sweeper.start();
      const rc = rt.config.reconcile;
      reconciler = new ReconcileScanner({
        store: rt.store,
        config: rt.config,
        keys: signer,
        now,
        nodeId: this.broker.nodeID,
        intervalMs: rc.intervalMs || 60_000,
        addressBudget: rc.addressesPerTick,
        maxBlocks: rc.blocksPerTick,
        metrics: reconcileMetrics(rt.metrics.registry),
        raise: (d) => reconciliationDrift(rt, d, log).then(() => undefined),
        resolve: (d) => resolveReconciliationDrift(rt, d, 'resolved', log).then(() => undefined),
        log,
      });
      if (rc.intervalMs > 0) await reconciler.start();
      const checkGas = () => gas.list().catch((e) => log.warn('gas wallet check failed:', rpcErrorText(e)));
      void checkGas();
      gasTimer = setInterval(checkGas, GAS_CHECK_EVERY_MS);
      gasTimer.unref();
    },
    async stopped() {
      if (gasTimer) clearInterval(gasTimer);
      await Promise.all([broadcaster?.stop(), payouts?.stop(), refunds?.stop(), custody?.stop(), sweeper?.stop(), reconciler?.stop()]);
      await signer?.close();
    },
  };
}
