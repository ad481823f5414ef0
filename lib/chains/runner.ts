/**
 * Runs a rail set's listener passes under its lease: every interval, take or renew the lease, and when
 * held run one pass (never two at once). A node that does not hold the lease only checks it, so another
 * node takes over within about one interval after the holder stops (it releases the lease) or one TTL
 * after it dies.
 */
import type { Lease } from './lease.ts';

export interface RunnerOptions<S> {
  name: string;
  lease: Lease;
  /** one pass; `stillHolding` renews the lease and says whether it is still ours */
  pass(stillHolding: () => Promise<boolean>): Promise<S>;
  /** called when the lease is (re)acquired, before the first pass under it */
  onAcquire?(): void;
  intervalMs: number;
  log: { info(...a: unknown[]): void; warn(...a: unknown[]): void };
}

export interface RunnerStatus<S> {
  name: string;
  owner: string;
  holding: boolean;
  passes: number;
  last_pass_at: string | null;
  last_pass_ms: number | null;
  last_error: string | null;
  last_stats: S | null;
}

export class RailRunner<S> {
  private readonly o: RunnerOptions<S>;
  private timer: NodeJS.Timeout | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private holding = false;
  private passes = 0;
  private lastPassAt: string | null = null;
  private lastPassMs: number | null = null;
  private lastError: string | null = null;
  private lastLoggedAt = 0;
  private lastStats: S | null = null;

  constructor(opts: RunnerOptions<S>) {
    this.o = opts;
  }

  start(): void {
    this.stopped = false;
    this.holding = false;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce().finally(() => this.schedule(this.o.intervalMs));
    }, ms);
    this.timer.unref();
  }

  /** Runs one lease check and, when held, one pass; queued behind a pass already under way. */
  runOnce(): Promise<S | null> {
    const run = this.queue.then(() => this.doRun());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async doRun(): Promise<S | null> {
    if (this.stopped) return null;
    try {
      const held = await this.o.lease.hold();
      if (held && !this.holding) {
        this.o.log.info(`${this.o.name}: listening (lease ${this.o.lease.id} taken by ${this.o.lease.owner})`);
        this.o.onAcquire?.();
      }
      if (!held && this.holding) this.o.log.info(`${this.o.name}: lease ${this.o.lease.id} is held by another node`);
      this.holding = held;
      if (!held || this.stopped) return null;
      const t0 = performance.now();
      const stats = await this.o.pass(() => this.o.lease.hold());
      this.lastPassMs = performance.now() - t0;
      this.lastStats = stats;
      this.lastPassAt = new Date().toISOString();
      this.passes++;
      this.lastError = null;
      return stats;
    } catch (e) {
      // a lease we could not renew (the store is unreachable) is lost once it lapses: stop working under it
      if (this.holding && !this.o.lease.held) {
        this.holding = false;
        this.o.log.warn(`${this.o.name}: lease ${this.o.lease.id} lapsed without renewal; stopped listening`);
      }
      const message = (e as Error)?.message ?? String(e);
      // the same failure on every pass (an RPC node down) is logged once a minute, not every interval
      const now = Date.now();
      if (message !== this.lastError || now - this.lastLoggedAt >= 60_000) {
        this.lastLoggedAt = now;
        this.o.log.warn(`${this.o.name}: pass failed, retried every interval:`, message);
      }
      this.lastError = message;
      return null;
    }
  }

  /** Stops the loop, waits for the pass under way, gives the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.queue;
    if (this.holding)
      await this.o.lease.release().catch((e) => this.o.log.warn(`${this.o.name}: lease not released:`, (e as Error).message));
    this.holding = false;
  }

  status(): RunnerStatus<S> {
    return {
      name: this.o.name,
      owner: this.o.lease.owner,
      holding: this.holding,
      passes: this.passes,
      last_pass_at: this.lastPassAt,
      last_pass_ms: this.lastPassMs,
      last_error: this.lastError,
      last_stats: this.lastStats,
    };
  }
}
