/**
 * Treasury: the platform gas wallets and reconciliation of ledger and chain, for operators
 * (`npm run operator -- gas-wallets`, `… reconcile`). No timers: an operator node runs it too.
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { KeyDeriver } from '../lib/chains/keys.ts';
import { GasWallets } from '../lib/treasury/gas-wallet.ts';
import { moneyOutMetrics } from '../lib/chains/metrics.ts';
import { reconcile } from '../lib/treasury/reconcile/wallets.ts';

export function createTreasuryService(rt: Runtime): ServiceSchema {
  let gas: GasWallets | null = null;
  const gasWallets = (log: { warn(...a: unknown[]): void }) => {
    gas ??= new GasWallets({
      config: rt.config,
      keys: new KeyDeriver(loadSeedPhrase(rt.config.dataDir).phrase),
      metrics: moneyOutMetrics(rt.metrics.registry),
      log,
    });
    return gas;
  };
  return {
    name: 'treasury',
    actions: {
      /** one entry per chain and network with rails: address, balance, low */
      gasWallets: {
        visibility: 'public',
        handler(this: { logger: { warn(...a: unknown[]): void } }) {
          return gasWallets(this.logger).list();
        },
      },
      /** every wallet's ledger balance against its on-chain balance: {checked, differences, skipped} */
      reconcile: {
        visibility: 'public',
        handler() {
          return reconcile({ store: rt.store, config: rt.config });
        },
      },
    },
  } as ServiceSchema;
}
