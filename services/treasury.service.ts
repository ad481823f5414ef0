/**
 * Treasury: the platform gas wallets and reconciliation of ledger and chain, for operators
 * (`npm run operator -- gas-wallets`, `… reconcile [--deep]`). No timers: an operator node runs it too
 * (the continuous reconciliation scanner runs with money-out).
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';
import { GasWallets } from '../lib/treasury/gas-wallet.ts';
import { moneyOutMetrics } from '../lib/chains/metrics.ts';
import { reconcile } from '../lib/treasury/reconcile/wallets.ts';
import { reconcileNetworks } from '../lib/treasury/reconcile/run.ts';
import { recordRun, reconcileMetrics } from '../lib/treasury/reconcile/metrics.ts';
import { reconciliationDrift } from '../lib/ops/alerts/index.ts';

type Log = { warn(...a: unknown[]): void };

export function createTreasuryService(rt: Runtime): ServiceSchema {
  let keys: KeyDeriver | null = null;
  let gas: GasWallets | null = null;
  const deriver = () => (keys ??= new KeyDeriver(loadSeedPhrase(rt.config.dataDir).phrase));
  const gasWallets = (log: Log) => {
    gas ??= new GasWallets({ config: rt.config, keys: deriver(), metrics: moneyOutMetrics(rt.metrics.registry), log });
    return gas;
  };
  return {
    name: 'treasury',
    actions: {
      /** one entry per chain and network with rails: address, balance, low */
      gasWallets: {
        visibility: 'public',
        handler(this: { logger: Log }) {
          return gasWallets(this.logger).list();
        },
      },
      /**
       * every wallet's ledger balance against its on-chain balance: {checked, differences, skipped}; with
       * `deep`, every check of lib/treasury/reconcile (movements, addresses at a stated height, platform
       * money, transfers out) with its drifts raised as alerts
       */
      reconcile: {
        visibility: 'public',
        async handler(this: { logger: Log }, ctx: Context<{ deep?: boolean }>) {
          if (!ctx.params?.deep) return reconcile({ store: rt.store, config: rt.config });
          const report = await reconcileNetworks(
            { store: rt.store, config: rt.config, keys: deriver(), now: () => rt.now() },
            { mode: 'deep' },
          );
          const metrics = reconcileMetrics(rt.metrics.registry);
          for (const n of report.networks) recordRun(metrics, n, 'deep');
          for (const d of report.drifts) await reconciliationDrift(rt, d, this.logger);
          return report;
        },
      },
    },
  };
}
