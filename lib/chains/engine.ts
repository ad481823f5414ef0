/**
 * What the due-scanned chain engines share (the transaction outbox; payouts, sweeps and custody moves in
 * lib/treasury): a due-scanner over their collection that steps each claimed row, `kick` (claim one row
 * now, e.g. once its gas top-up landed), and the clock and log from their deps. Each engine keeps its own
 * steps.
 */
import { DueScanner } from '../core/due-scanner.ts';
import type { Doc, Filter, Store } from '../store/port.ts';
import { rpcErrorText } from './clients.ts';

export interface ScanDeps {
  store: Store;
  /** scanner period (BROADCAST_POLL_INTERVAL_MS) */
  pollIntervalMs: number;
  now?: () => Date;
  log?: { info?(...a: unknown[]): void; warn(...a: unknown[]): void };
}

export interface ChainEngineScan {
  name: string;
  coll: string;
  dueField: string;
  /** which rows the engine steps (kick adds the id) */
  filter: Filter;
  /** how long a claim lasts before another node may take the row (default 60 s) */
  leaseMs?: number;
}

export abstract class ChainEngine<T extends Doc, D extends ScanDeps> {
  protected readonly d: D;
  protected readonly scanner: DueScanner<T>;
  private readonly scan: ChainEngineScan & { leaseMs: number };

  constructor(d: D, scan: ChainEngineScan) {
    this.d = d;
    this.scan = { ...scan, leaseMs: scan.leaseMs ?? 60_000 };
    this.scanner = new DueScanner<T>({
      ...this.scan,
      store: d.store,
      intervalMs: d.pollIntervalMs,
      now: () => this.now(),
      log: d.log,
      handle: (row) =>
        this.step(row).then(
          () => undefined,
          (e) => {
            throw new Error(rpcErrorText(e));
          },
        ),
    });
  }

  /** one step of a claimed row (its version is current) */
  abstract step(row: T): Promise<unknown>;

  start(): void {
    this.scanner.start();
  }

  stop(): Promise<void> {
    return this.scanner.stop();
  }

  scanOnce(): Promise<number> {
    return this.scanner.scanOnce();
  }

  /** a step for one row now, if it is due (what the scanner would do on its next tick) */
  async kick(id: string): Promise<void> {
    const { coll, dueField, filter, leaseMs } = this.scan;
    const [row] = await this.d.store.claimDue<T>(coll, { dueField, filter: { id, ...filter }, now: this.now(), leaseMs, limit: 1 });
    if (row) await this.step(row);
  }

  protected now(): Date {
    return this.d.now?.() ?? new Date();
  }

  protected log() {
    return this.d.log ?? console;
  }
}
