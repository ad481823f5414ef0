/** Metrics of the money-out side, registered once per node registry (labels: chain, network, purpose only). */
import { Counter, Gauge, type Registry } from 'prom-client';
import { perRegistry } from '../runtime/metrics.ts';

export interface MoneyOutMetrics {
  gasWalletBalance: Gauge<'chain' | 'network'>;
  gasWalletLow: Counter<'chain' | 'network'>;
  broadcasts: Counter<'chain' | 'network' | 'purpose' | 'outcome'>;
}

export const moneyOutMetrics = perRegistry((registry: Registry): MoneyOutMetrics => ({
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
}));
