/**
 * Continuous reconciliation: one node at a time (the `reconcile` lease, lib/chains/lease.ts) runs a tick
 * every RECONCILE_INTERVAL_MS. The tick is due work in the store (`recon_state` id `tick`, field
 * `next_run_at`) claimed by the due-scanner (lib/core/due-scanner.ts), so a node that dies mid-tick is
 * replaced after the claim's lease and no two nodes tick at once; the lease keeps one node the runner
 * while it lives, so its RPC budget and cursors advance from one place.
 *
 * Each tick reconciles every configured network incrementally (lib/treasury/reconcile/run.ts, mode
 * `tick`), hands each open drift it found to `raise` (the alert pipeline: `reconciliation_drift`) and each
 * drift it no longer found to `resolve` (its alert resolves), and records metrics.
 */
import { isDuplicate, type Doc, type Store } from '../../store/port.ts';
import { DueScanner } from '../../core/due-scanner.ts';
import { Lease } from '../../chains/lease.ts';
import { reconcileNetworks, type ReconcileDeps, type ReconcileReport } from './run.ts';
import { RECON_STATE } from './records.ts';
import { recordRun, type ReconcileMetrics } from './metrics.ts';
import type { Drift } from './drift.ts';

export interface ReconcileScannerOptions extends ReconcileDeps {
  store: Store;
  nodeId: string;
  intervalMs: number;
  addressBudget: number;
  maxBlocks: number;
  metrics?: ReconcileMetrics;
  raise(drift: Drift): Promise<void>;
  /** a drift on record that this tick no longer found */
  resolve(drift: Drift): Promise<void>;
  log?: { warn(...a: unknown[]): void };
}

interface TickDoc extends Doc {
  next_run_at: string;
}

const TICK = 'tick';
/** how long a claimed tick is held before another node may run it */
const CLAIM_MS = 10 * 60_000;

export class ReconcileScanner {
  private readonly o: ReconcileScannerOptions;
  private readonly lease: Lease;
  private readonly scanner: DueScanner<TickDoc>;
  last: ReconcileReport | null = null;

  constructor(o: ReconcileScannerOptions) {
    this.o = o;
    const now = () => o.now?.() ?? new Date();
    this.lease = new Lease(o.store, 'reconcile', o.nodeId, Math.max(3 * o.intervalMs, 30_000), now);
    this.scanner = new DueScanner<TickDoc>({
      name: 'reconcile',
      store: o.store,
      coll: RECON_STATE,
      dueField: 'next_run_at',
      filter: { id: TICK },
      leaseMs: CLAIM_MS,
      intervalMs: Math.min(o.intervalMs, 5_000),
      batch: 1,
      drain: false,
      now,
      log: o.log,
      handle: (row) => this.tick(row).then(() => undefined),
    });
  }

  private now(): Date {
    return this.o.now?.() ?? new Date();
  }

  async start(): Promise<void> {
    try {
      // the first tick one interval after start: a node that starts does not hammer its RPC nodes at once
      const first = new Date(this.now().getTime() + this.o.intervalMs).toISOString();
      await this.o.store.write([{ op: 'insert', coll: RECON_STATE, doc: { id: TICK, next_run_at: first } }]);
    } catch (e) {
      if (!isDuplicate(e)) throw e;
    }
    this.scanner.start();
  }

  async stop(): Promise<void> {
    await this.scanner.stop();
    await this.lease.release().catch(() => undefined);
  }

  /** one tick now, whoever's turn it is (tests, operators); null when another node holds the lease */
  async runOnce(): Promise<ReconcileReport | null> {
    if (!(await this.lease.hold())) return null;
    return this.reconcile();
  }

  private async tick(row: TickDoc): Promise<ReconcileReport | null> {
    let report: ReconcileReport | null = null;
    if (await this.lease.hold()) report = await this.reconcile();
    // the next tick is due one interval on, whoever runs it
    const next = new Date(this.now().getTime() + this.o.intervalMs).toISOString();
    await this.o.store
      .write([{ op: 'cas', coll: RECON_STATE, doc: { ...row, next_run_at: next }, expected: row.version! }])
      .catch(() => undefined);
    return report;
  }

  private async reconcile(): Promise<ReconcileReport> {
    const report = await reconcileNetworks(this.o, { mode: 'tick', addressBudget: this.o.addressBudget, maxBlocks: this.o.maxBlocks });
    for (const n of report.networks) {
      if (this.o.metrics) recordRun(this.o.metrics, n, 'tick');
      if (n.error) this.o.log?.warn(`reconciliation of ${n.chain} ${n.network} failed: ${n.error}`);
    }
    for (const d of report.drifts)
      await this.o.raise(d).catch((e) => this.o.log?.warn('reconciliation alert failed:', (e as Error).message));
    for (const d of report.resolved)
      await this.o.resolve(d).catch((e) => this.o.log?.warn('reconciliation alert resolution failed:', (e as Error).message));
    this.last = report;
    return report;
  }
}
