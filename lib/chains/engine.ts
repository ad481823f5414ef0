/**
 * What the outbox-driven chain engines (payouts, sweeps, custody moves) share: a due-scanner over their
 * collection that steps each claimed row, `kick` (claim one row now, e.g. once its gas top-up landed),
 * and the clock and log from their deps. Each engine keeps its own steps and outbox hooks.
 */
import { DueScanner } from '../core/due-scanner.ts';
import type { Doc, Filter, Store } from '../store/port.ts';
import type { Broadcaster } from './broadcast/outbox.ts';
import { rpcErrorText } from './clients.ts';

export interface ChainEngineDeps {
  store: Store;
  broadcaster: Broadcaster;
  /** scanner period (BROADCAST_POLL_INTERVAL_MS) */
  pollIntervalMs: number;
  now?: () => Date;
  log?: { warn(...a: unknown[]): void };
}

export interface ChainEngineScan {
  name: string;
  coll: string;
  dueField: string;
  /** which rows the engine steps (kick adds the id) */
  filter: Filter;
}

/** a claim lasts this long before another node may take the row */
const LEASE_MS = 60_000;

export abstract class ChainEngine<T extends Doc, D extends ChainEngineDeps> {
  protected readonly d: D;
  protected readonly scanner: DueScanner<T>;
  private readonly scan: ChainEngineScan;

  constructor(d: D, scan: ChainEngineScan) {
    this.d = d;
    this.scan = scan;
    this.scanner = new DueScanner<T>({
      ...scan,
      store: d.store,
      leaseMs: LEASE_MS,
      intervalMs: d.pollIntervalMs,
      now: () => this.now(),
      log: d.log,
      handle: (row) =>
        this.step(row).catch((e) => {
          throw new Error(rpcErrorText(e));
        }),
    });
  }

  /** one step of a claimed row (its version is current) */
  abstract step(row: T): Promise<void>;

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
    const { coll, dueField, filter } = this.scan;
    const [row] = await this.d.store.claimDue<T>(coll, {
      dueField,
      filter: { id, ...filter },
      now: this.now(),
      leaseMs: LEASE_MS,
      limit: 1,
    });
    if (row) await this.step(row);
  }

  protected now(): Date {
    return this.d.now?.() ?? new Date();
  }

  protected log() {
    return this.d.log ?? console;
  }
}
