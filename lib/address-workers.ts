/**
 * A piscina pool that derives deposit addresses on worker threads, so that session creation under load
 * does not spend the event loop (and starve broker heartbeats) on elliptic-curve arithmetic.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Piscina } from 'piscina';
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
      idleTimeout: 60_000,
    });
  }

  derive(chain: AddressChain, index: number): Promise<string> {
    return this.pool.run({ chain, index });
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
