/**
 * Prometheus metrics (prom-client), one registry per running node. abuse_signal_total carries exactly
 * the spec's low-cardinality labels; merchant ids, IPs, session ids and URLs are never labels.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type AbuseSignal = 'registration_spike' | 'simulation_abuse' | 'limit_violation';
export type AbuseOutcome =
  | 'registered'
  | 'rate_limited'
  | 'invalid_webhook_url'
  | 'blocked_non_demo'
  | 'blocked_non_pending'
  | 'mainnet_kyc_required'
  | 'amount_limit_exceeded'
  | 'daily_volume_limit_exceeded';
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

/** A chain listener's view of itself at scrape time (lib/chains/listener-service.ts). */
export interface ListenerLag {
  chain: string;
  network: string;
  /** this node holds the network's lease (only the holder reports lag) */
  holding: boolean;
  /** blocks the listener may process but has not yet (Ethereum); null where blocks do not apply */
  blocks: number | null;
  last_pass_at: string | null;
}

/**
 * Makes a module's metrics once per registry: a service started again on the same node (store-fence.ts)
 * finds them registered and reuses them instead of failing on a second registration.
 */
export function perRegistry<T>(make: (registry: Registry) => T): (registry: Registry) => T {
  const made = new WeakMap<Registry, T>();
  return (registry) => {
    let m = made.get(registry);
    if (!m) made.set(registry, (m = make(registry)));
    return m;
  };
}

export const ABUSE_LABELS = ['signal', 'outcome', 'environment', 'chain', 'network', 'token'] as const;

export class Metrics {
  readonly registry = new Registry();
  readonly abuse: Counter<(typeof ABUSE_LABELS)[number]>;
  /** by route template (`POST /v1/payment_sessions/:session_id/simulate`, `unmatched`), never the raw path */
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly alertsRaised: Counter<'alert_type' | 'severity'>;
  /** chain listener lag per chain and network: blocks (slots) behind the head, seconds since the last pass */
  readonly listenerLagBlocks: Gauge<'chain' | 'network'>;
  readonly listenerLagSeconds: Gauge<'chain' | 'network'>;
  /** actor hosts: messages waiting in all mailboxes, activations held, activations made */
  readonly actorMailboxDepth: Gauge<'actor'>;
  readonly actorActive: Gauge<'actor'>;
  readonly actorActivations: Counter<'actor'>;
  readonly storeOpDuration: Histogram<'op'>;
  /** payouts by current status, counted in the store at scrape time (the same on every node: use max) */
  readonly payouts: Gauge<'status'>;
  /** refunds of payment sessions by current status, counted like payouts */
  readonly refunds: Gauge<'status'>;
  /** set by the ops service: counts refunds per status in the store */
  refundCounts: (() => Promise<Record<string, number>>) | null = null;
  /** set by the ops service: counts payouts per status in the store */
  payoutCounts: (() => Promise<Record<string, number>>) | null = null;

  /** actor hosts of this node by actor kind: read at scrape time, nothing is counted per message */
  readonly actorSources = new Map<string, () => { depth: number; active: number }>();
  readonly listenerSources = new Set<() => ListenerLag[]>();

  constructor({ defaults = true } = {}) {
    const actorSources = this.actorSources;
    const listenerSources = this.listenerSources;
    const listeners = () => [...listenerSources].flatMap((f) => f()).filter((l) => l.holding);
    if (defaults) collectDefaultMetrics({ register: this.registry });
    this.abuse = new Counter({
      name: 'abuse_signal_total',
      help: 'Abuse and limit signals by outcome',
      labelNames: [...ABUSE_LABELS],
      registers: [this.registry],
    });
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'API requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'API request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.alertsRaised = new Counter({
      name: 'alerts_raised_total',
      help: 'Operational alerts raised (new alerts, not re-notifications)',
      labelNames: ['alert_type', 'severity'],
      registers,
    });
    this.listenerLagBlocks = new Gauge({
      name: 'chain_listener_lag_blocks',
      help: 'Blocks the chain listener may process (head minus confirmation depth) but has not yet, on the lease holder (Ethereum)',
      labelNames: ['chain', 'network'],
      registers,
      collect() {
        this.reset();
        for (const l of listeners()) if (l.blocks !== null) this.set({ chain: l.chain, network: l.network }, l.blocks);
      },
    });
    this.listenerLagSeconds = new Gauge({
      name: 'chain_listener_lag_seconds',
      help: 'Seconds since the chain listener last finished a pass, on the lease holder',
      labelNames: ['chain', 'network'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const l of listeners())
          if (l.last_pass_at) this.set({ chain: l.chain, network: l.network }, Math.max(0, (now - Date.parse(l.last_pass_at)) / 1000));
      },
    });
    this.actorMailboxDepth = new Gauge({
      name: 'actor_mailbox_depth',
      help: 'Messages waiting or running in the actor mailboxes of this node',
      labelNames: ['actor'],
      registers,
      collect() {
        for (const [actor, f] of actorSources) this.set({ actor }, f().depth);
      },
    });
    this.actorActive = new Gauge({
      name: 'actor_active',
      help: 'Actors held in memory on this node',
      labelNames: ['actor'],
      registers,
      collect() {
        for (const [actor, f] of actorSources) this.set({ actor }, f().active);
      },
    });
    this.actorActivations = new Counter({
      name: 'actor_activations_total',
      help: 'Actor activations (loads into memory) on this node',
      labelNames: ['actor'],
      registers,
    });
    this.storeOpDuration = new Histogram({
      name: 'store_operation_duration_seconds',
      help: 'Store operation latency by operation',
      labelNames: ['op'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    const self = this;
    this.payouts = new Gauge({
      name: 'payouts',
      help: 'Payouts by current status (counted in the shared store: every node reports the same numbers)',
      labelNames: ['status'],
      registers,
      async collect() {
        if (!self.payoutCounts) return;
        // a node cut from the store still answers /metrics (its listener and actor gauges): without these series
        const counts = await self.payoutCounts().catch(() => null);
        if (!counts) return this.reset();
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      },
    });
    this.refunds = new Gauge({
      name: 'refunds',
      help: 'Refunds of payment sessions by current status (counted in the shared store: every node reports the same numbers)',
      labelNames: ['status'],
      registers,
      async collect() {
        if (!self.refundCounts) return;
        // a node cut from the store still answers /metrics (its listener and actor gauges): without these series
        const counts = await self.refundCounts().catch(() => null);
        if (!counts) return this.reset();
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      },
    });
  }

  signal(l: AbuseLabels): void {
    this.abuse.inc({
      signal: l.signal,
      outcome: l.outcome,
      environment: l.environment,
      chain: l.chain ?? '',
      network: l.network ?? '',
      token: l.token ?? '',
    });
  }
}
