/**
 * Committing ledger changes: build the ops from fresh reads, write them, and on a lost race (another
 * writer moved an account or wrote the same transfer first) build again. A replayed transfer finds itself
 * already written and builds nothing, so retrying never moves money twice.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isConflict, isDuplicate, type Store, type WriteOp } from '../store/port.ts';

export interface RetryOptions { attempts?: number; baseMs?: number }

/** Runs `attempt` again while it fails on a store race (version conflict or duplicate key). */
export async function retryOnConflict<T>(attempt: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 50;
  const base = opts.baseMs ?? 2;
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (i >= attempts || !(isConflict(e) || isDuplicate(e))) throw e;
      await sleep(Math.random() * base * Math.min(i, 10));
    }
  }
}

/** Builds ops (reading the store afresh each time) and commits them, retrying on races. */
export async function commitWithRetry(store: Store, build: () => Promise<WriteOp[]>, opts?: RetryOptions): Promise<WriteOp[]> {
  return retryOnConflict(async () => {
    const ops = await build();
    if (ops.length) await store.write(ops);
    return ops;
  }, opts);
}
