/** Retrying a read-decide-write step when another writer got there first (compare-and-set lost). */
import { isConflict, isDuplicate } from '../store/port.ts';
import { retryOnConflict } from '../core/retry.ts';

export const MAX_ATTEMPTS = 25;

/**
 * Runs `step` again (it re-reads) when its write lost a compare-and-set race or, for new versions, a
 * race on the (line, version number) key. Any other error goes to the caller; a race lost every time is a 409.
 */
export function retrying<T>(step: () => Promise<T>, retryColls: string[] = []): Promise<T> {
  return retryOnConflict(step, {
    attempts: MAX_ATTEMPTS,
    retryOn: (e) => isConflict(e) || (isDuplicate(e) && retryColls.includes(e.coll) && /version_no/.test(e.message)),
  });
}
