/**
 * The one compare-and-set retry loop: run a read-decide-write step again when its write lost a race
 * (another writer changed the row first), with a short random pause so racing writers spread out.
 * The step must re-read what it decides on; anything other than a lost race goes to the caller.
 */
import { isConflict } from '../store/port.ts';
import { REMEDIATION, conflict } from './errors.ts';

export interface RetryOptions {
  /** attempts in all, the first included (default 25) */
  attempts?: number;
  /** which errors mean "lost a race, read again" (default: a version conflict) */
  retryOn?: (e: unknown) => boolean;
  /** longest pause before attempt n+1, in ms (default min(20, 2n)); the pause is random below it */
  maxPauseMs?: (attempt: number) => number;
  /** the error thrown when every attempt lost (default: a 409 asking the client to retry) */
  exhausted?: () => Error;
}

export const RACE_LOST_MESSAGE = 'the resource was changed by other requests at the same time; retry the request';

export async function retryOnConflict<T>(step: (attempt: number) => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 25;
  const retryOn = opts.retryOn ?? isConflict;
  const maxPause = opts.maxPauseMs ?? ((n: number) => Math.min(20, 2 * n));
  for (let attempt = 1; ; attempt++) {
    try {
      return await step(attempt);
    } catch (e) {
      if (!retryOn(e)) throw e;
      if (attempt >= attempts)
        throw opts.exhausted ? opts.exhausted() : conflict(RACE_LOST_MESSAGE, { retryable: true, remediation: REMEDIATION.retryLater });
      const pause = Math.floor(Math.random() * maxPause(attempt));
      if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    }
  }
}
