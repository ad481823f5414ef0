/**
 * The one persisted-reminder primitive (DESIGN.md: timers do not survive a node). Work that is due is a
 * row with an ISO due time (`expiry_due_at`, `next_attempt_at`, `next_delivery_at`, …); a scanner on any
 * node claims due rows atomically (store.claimDue pushes their due time by a lease, so other nodes skip
 * them) and hands each to `handle`. A handler that fails leaves the row to come back when its lease ends,
 * so handling must be harmless when it happens twice.
 *
 * - interval: a tick every `intervalMs` (timers are unref'd: they never keep a process alive);
 * - overlap guard: a tick while a scan is still running is skipped;
 * - drain: a scan claims batch after batch until one comes back short (or `drain: false`: one batch);
 * - room: bounded in-flight work claims only as many rows as there is room for;
 * - stop: no new claims (a running batch finishes), and waits for the running scan.
 */
import type { Doc, Filter, Store } from '../store/port.ts';

export interface DueScannerOptions<T extends Doc> {
  /** for log lines */
  name: string;
  store: Store;
  coll: string;
  /** field holding the due time as an ISO timestamp */
  dueField: string;
  /** extra conditions on the rows (e.g. status) */
  filter?: Filter;
  /** how far a claim pushes the due time: the time a handler has before another node may take the row */
  leaseMs: number;
  intervalMs: number;
  /** rows per claim (default 100) */
  batch?: number;
  /** rows handled at once within a batch (default 10) */
  parallel?: number;
  /** claim batch after batch until one comes back short (default true) */
  drain?: boolean;
  /** how many rows there is room for now (bounded in-flight work); 0 skips the claim (default: batch) */
  room?: () => number;
  now?: () => Date;
  /** after each claim: how many rows came back of how many asked (0 of 0: no room); a full claim means more may be due */
  onClaim?: (claimed: number, limit: number) => void;
  /** handles one claimed row; a throw is logged and the row is retried after its lease */
  handle(row: T, claimedAt: Date): Promise<void>;
  log?: { warn(...args: unknown[]): void };
}

export class DueScanner<T extends Doc = Doc> {
  private readonly o: DueScannerOptions<T>;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private halted = false;

  constructor(opts: DueScannerOptions<T>) {
    this.o = opts;
  }

  /** Starts the interval (idempotent). */
  start(): void {
    if (this.timer) return;
    this.halted = false;
    this.timer = setInterval(() => {
      if (this.running) return; // overlap guard
      this.scanOnce().catch((e) => this.log().warn(`${this.o.name} scan failed:`, (e as Error)?.message ?? e));
    }, this.o.intervalMs);
    this.timer.unref();
  }

  /**
   * One scan now; returns how many rows were claimed. When a scan is already running this waits for it
   * and then scans again, so everything due when the call was made has been claimed when it returns.
   */
  async scanOnce(): Promise<number> {
    while (this.running) await this.running.catch(() => undefined);
    const p = this.scan();
    this.running = p;
    try {
      return await p;
    } finally {
      if (this.running === p) this.running = null;
    }
  }

  /** Stops the interval and waits for the running scan; until start() again, scans claim nothing. */
  async stop(): Promise<void> {
    this.halted = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  get isRunning(): boolean {
    return this.running !== null;
  }

  private log() {
    return this.o.log ?? console;
  }

  private async scan(): Promise<number> {
    const batch = this.o.batch ?? 100;
    const parallel = this.o.parallel ?? 10;
    let total = 0;
    for (;;) {
      if (this.halted) return total; // stopped: the running batch finishes, no new claim
      const limit = Math.min(batch, this.o.room ? this.o.room() : batch);
      if (limit <= 0) {
        this.o.onClaim?.(0, 0);
        return total;
      }
      const now = (this.o.now ?? (() => new Date()))();
      const due = await this.o.store.claimDue<T>(this.o.coll, {
        dueField: this.o.dueField,
        filter: this.o.filter,
        now,
        leaseMs: this.o.leaseMs,
        limit,
      });
      this.o.onClaim?.(due.length, limit);
      for (let i = 0; i < due.length; i += parallel) {
        await Promise.all(
          due.slice(i, i + parallel).map(async (row) => {
            // a row whose claim has lapsed while it waited in this batch may be another node's now
            if ((this.o.now ?? (() => new Date()))().getTime() >= now.getTime() + this.o.leaseMs) return;
            try {
              await this.o.handle(row, now);
            } catch (e) {
              this.log().warn(`${this.o.name}: ${row.id} failed, retried after the lease:`, (e as Error)?.message ?? e);
            }
          }),
        );
      }
      total += due.length;
      if (due.length < limit || this.o.drain === false) return total;
    }
  }
}
