/**
 * Committing ledger changes: build the ops from fresh reads, write them, and on a lost race (another
 * writer moved an account or wrote the same transfer first) build again. A replayed transfer finds itself
 * already written and builds nothing, so retrying never moves money twice.
 */
import { retryOnConflict, type RetryOptions } from '../core/retry.ts';
import { isConflict, isDuplicate, type Store, type WriteOp } from '../store/port.ts';

/** a lost race on an account (version conflict) or on a transfer id or new account (duplicate key) */
export const isLedgerRace = (e: unknown) => isConflict(e) || isDuplicate(e);

/** Builds ops (reading the store afresh each time) and commits them, retrying on races. */
export async function commitWithRetry(store: Store, build: () => Promise<WriteOp[]>, opts: RetryOptions = {}): Promise<WriteOp[]> {
  return retryOnConflict(
    async () => {
      const ops = await build();
      if (ops.length) await store.write(ops);
      return ops;
    },
    { attempts: 50, retryOn: isLedgerRace, ...opts },
  );
}
