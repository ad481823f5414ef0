/** Retrying a read-decide-write step when another writer got there first (compare-and-set lost). */
import { isConflict, isDuplicate } from '../store/port.ts';
import { conflict } from '../core/errors.ts';

export const MAX_ATTEMPTS = 25;

/**
 * Runs `step` again (it re-reads) when its write lost a compare-and-set race or, for new versions, a
 * race on the (line, version number) key. Any other error goes to the caller; a race lost every time is a 409.
 */
export async function retrying<T>(step: () => Promise<T>, retryColls: string[] = []): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (e) {
      const retry = isConflict(e) || (isDuplicate(e) && retryColls.includes(e.coll) && /version_no/.test(e.message));
      if (!retry) throw e;
      if (attempt >= MAX_ATTEMPTS) throw conflict('the resource was changed by other requests at the same time; retry the request');
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * Math.min(20, 2 * attempt))));
    }
  }
}
