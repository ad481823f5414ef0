/**
 * Prometheus metrics (prom-client), one registry per running node. abuse_signal_total carries exactly
 * the spec's low-cardinality labels; merchant ids, IPs, session ids and URLs are never labels.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type AbuseSignal = 'registration_spike' | 'simulation_abuse' | 'limit_violation';
export type AbuseOutcome =
  | 'registered' | 'rate_limited' | 'invalid_webhook_url' | 'blocked_non_demo' | 'blocked_non_pending'
  | 'mainnet_kyc_required' | 'amount_limit_exceeded' | 'daily_volume_limit_exceeded';
export type Environment = 'live' | 'sandbox' | 'demo';

export interface AbuseLabels {
  signal: AbuseSignal;
  outcome: AbuseOutcome;
  environment: Environment;
  /** '' where the signal concerns no rail (registration, rate limits) */
  chain?: 'solana' | 'ethereum' | '';
  network?: 'testnet' | 'mainnet' | '';
  token?: 'USDC' | 'ETH' | 'SOL' | '';
}

export const ABUSE_LABELS = ['signal', 'outcome', 'environment', 'chain', 'network', 'token'] as const;

export class Metrics {
  readonly registry = new Registry();
  readonly abuse: Counter<(typeof ABUSE_LABELS)[number]>;
  readonly httpDuration: Histogram<'method' | 'status'>;

  constructor({ defaults = true } = {}) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
    this.abuse = new Counter({
      name: 'abuse_signal_total',
      help: 'Abuse and limit signals by outcome',
      labelNames: [...ABUSE_LABELS],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'API request duration',
      labelNames: ['method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
  }

  signal(l: AbuseLabels): void {
    this.abuse.inc({ signal: l.signal, outcome: l.outcome, environment: l.environment, chain: l.chain ?? '', network: l.network ?? '', token: l.token ?? '' });
  }
}
