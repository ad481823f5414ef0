/**
 * A piscina pool that derives deposit addresses on worker threads, so that session creation under load
 * does not spend the event loop (and starve broker heartbeats) on elliptic-curve arithmetic.
 *
 * - `stricterFIFO`: a task that cannot be placed at once waits in arrival order. Piscina's default sends
 *   such a task back to the tail of its queue, so under load some derivations kept losing their turn
 *   (measured: derive wait p99 962 ms, the whole p99 of session creation).
 * - no thread is kept when idle (`minThreads: 0`, ~50 MB of an idle node's memory): the pool
 *   (lib/addresses/pool.ts) keeps addresses derived ahead (its first block on the main thread), so a
 *   worker boots for a background refill, not on a request's path, and leaves 10 s after the last one
 *   (a refill every 64 sessions keeps it alive from ~6 sessions/s).
 * - `deriveBlock` derives a reserved block of indexes in one task: one hop for many addresses.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Piscina } from 'piscina';
import { POOL_CLOSE_TIMEOUT_MS, closePool, runTask } from '../core/worker-pool.ts';
import type { AddressChain } from './addresses.ts';

export class AddressWorkers {
  private pool: Piscina;

  constructor(phrase: string, root = process.env.APP_ROOT || process.cwd()) {
    this.pool = new Piscina({
      filename: resolve(root, 'workers/derive-address.ts'),
      workerData: { phrase },
      minThreads: 0,
      // leave one core to the event loop
      maxThreads: Math.max(1, availableParallelism() - 1),
      idleTimeout: 10_000,
      closeTimeout: POOL_CLOSE_TIMEOUT_MS,
      stricterFIFO: true,
    });
    // a reply for a task the pool no longer knows (destroyed while it ran) must not crash the node
    this.pool.on('error', () => undefined);
  }

  derive(chain: AddressChain, index: number): Promise<string> {
    return runTask(this.pool, { chain, index });
  }

  /** The addresses of indexes start, start + 1, … start + count - 1, in that order. */
  deriveBlock(chain: AddressChain, start: number, count: number): Promise<string[]> {
    return runTask(this.pool, { chain, index: start, count });
  }

  async close(): Promise<void> {
    await closePool(this.pool);
  }
}
