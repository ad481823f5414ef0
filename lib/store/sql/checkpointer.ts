/**
 * WAL checkpoints of a busy SQLite file on a thread of their own.
 *
 * SQLite checkpoints inside the COMMIT that takes the WAL past `wal_autocheckpoint` pages (1,000 by
 * default): that commit copies the WAL into the database file and fsyncs it, on the event loop. Under a
 * stream of writes (one wallet's spends: ~25 MB of WAL a second) that was six or seven commits a second of
 * 6–15 ms each, most of the commits' time and the HTTP stack's worst waits behind them.
 *
 * Once the WAL has grown past WAL_START_BYTES, a worker thread with its own connection runs PASSIVE
 * checkpoints every CHECKPOINT_EVERY_MS (they never wait for, nor block, the writer or its readers) and the
 * writing connection's own autocheckpoint moves up to FALLBACK_PAGES, a bound for a worker that falls
 * behind. Durability is the same: a commit is in the WAL (synchronous=NORMAL) whoever copies it later.
 * The worker leaves when the WAL has not changed for IDLE_MS (an idle node runs no thread), and the
 * connection's autocheckpoint goes back to SQLite's default.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';

const WAL_START_BYTES = 1 << 20;
const CHECK_EVERY_COMMITS = 64;
const CHECKPOINT_EVERY_MS = 100;
const IDLE_MS = 10_000;
const FALLBACK_PAGES = 16_384;
const DEFAULT_PAGES = 1000;

/** the worker (CommonJS, evaluated: no file to resolve under the test runner's transform) */
const WORKER = `
const { workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let last = -1, quiet = 0;
const timer = setInterval(() => {
  let log = -1;
  try { log = Number(checkpoint.get().log); } catch { /* busy or locked: next time */ }
  quiet = log === last ? quiet + ${CHECKPOINT_EVERY_MS} : 0;
  last = log;
  if (quiet >= ${IDLE_MS}) { clearInterval(timer); db.close(); }
}, ${CHECKPOINT_EVERY_MS});
`;

export class Checkpointer {
  private worker: Worker | null = null;
  private commits = 0;
  private readonly path: string;
  private readonly db: DatabaseSync;

  constructor(db: DatabaseSync, path: string) {
    this.db = db;
    this.path = path;
  }

  /** After each COMMIT: now and then, starts the worker when the WAL has grown. */
  committed(): void {
    if (this.worker || ++this.commits % CHECK_EVERY_COMMITS !== 0) return;
    // no WAL file (yet) is a small one
    const size = statSync(`${this.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size < WAL_START_BYTES) return;
    const worker = new Worker(WORKER, { eval: true, workerData: { path: this.path } });
    worker.unref();
    this.worker = worker;
    this.db.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_PAGES}`);
    const done = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      if (this.db.isOpen) this.db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
    };
    worker.once('exit', done);
    worker.once('error', done);
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
