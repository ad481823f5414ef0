/** Metrics of the money-out side, registered once per node registry (labels: chain, network, purpose only). */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface MoneyOutMetrics {
  gasWalletBalance: Gauge<'chain' | 'network'>;
  gasWalletLow: Counter<'chain' | 'network'>;
  broadcasts: Counter<'chain' | 'network' | 'purpose' | 'outcome'>;
}

const byRegistry = new WeakMap<Registry, MoneyOutMetrics>();

export function moneyOutMetrics(registry: Registry): MoneyOutMetrics {
  let m = byRegistry.get(registry);
  if (!m) {
    m = {
      gasWalletBalance: new Gauge({
        name: 'gas_wallet_balance',
        help: 'Platform gas wallet balance in token units (ETH, SOL)',
        labelNames: ['chain', 'network'],
        registers: [registry],
      }),
      gasWalletLow: new Counter({
        name: 'gas_wallet_low_total',
        help: 'Checks that found a platform gas wallet below its minimum (GAS_WALLET_MIN_*)',
        labelNames: ['chain', 'network'],
        registers: [registry],
      }),
      broadcasts: new Counter({
        name: 'chain_tx_total',
        help: 'Outgoing chain transactions by outcome (signed, broadcast, rebroadcast, confirmed, failed)',
        labelNames: ['chain', 'network', 'purpose', 'outcome'],
        registers: [registry],
      }),
    };
    byRegistry.set(registry, m);
  }
  return m;
}
