/**
 * The signer pool: a piscina pool running workers/sign-transaction.ts, so signing never holds the event
 * loop (broker heartbeats). Addresses are derived on the calling thread (public data, cached).
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Piscina } from 'piscina';
import { POOL_CLOSE_TIMEOUT_MS, closePool, runTask } from '../core/worker-pool.ts';
import { KeyDeriver, type KeyRef } from './keys.ts';
import type { SignResult, SignTask } from './sign.ts';

export interface Signer {
  address(ref: KeyRef): string;
  sign(task: SignTask): Promise<SignResult>;
  close(): Promise<void>;
}

export class PoolSigner implements Signer {
  private pool: Piscina;
  private keys: KeyDeriver;

  constructor(phrase: string, root = process.env.APP_ROOT || process.cwd()) {
    this.keys = new KeyDeriver(phrase);
    this.pool = new Piscina({
      filename: resolve(root, 'workers/sign-transaction.ts'),
      workerData: { phrase },
      minThreads: 0,
      maxThreads: Math.max(1, Math.min(2, availableParallelism() - 1)),
      idleTimeout: 60_000,
      closeTimeout: POOL_CLOSE_TIMEOUT_MS,
    });
    // a close that timed out is reported as an 'error' event: the pool is destroyed next all the same
    this.pool.on('error', () => undefined);
  }

  address(ref: KeyRef): string {
    return this.keys.address(ref);
  }

  sign(task: SignTask): Promise<SignResult> {
    return runTask(this.pool, task);
  }

  async close(): Promise<void> {
    await closePool(this.pool);
  }
}
