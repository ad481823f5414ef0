/**
 * DAILY_VOLUME_LIMIT: a merchant's session volume per rail and UTC day, one counter document per
 * (merchant, rail, day) in `session_volume`, reserved by compare-and-set before the session is created
 * and released when the creation fails. The decision is pure (`nextVolume`); the loop is lib/core/retry.ts.
 *
 * Each reservation is a hold named by its session's id (`session_volume_holds`), written in the counter's
 * own write: a session is counted once however many requests try to create it. A create whose outcome
 * was unknown keeps its hold, and the retry that creates the session under the same id later (its
 * Idempotency-Key's reservation, lib/core/idempotency.ts) finds it instead of counting the amount again.
 */
import { REMEDIATION, rateLimited } from '../core/errors.ts';
import { retryOnConflict } from '../core/retry.ts';
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../store/port.ts';
import { railKey, type Rail } from '../../config/rails.ts';
import { floorSubunits } from '../core/money.ts';
import { dailyVolumeRefusal } from './policy.ts';

const DAY_MS = 86_400_000;
export const VOLUME_COLLECTION = 'session_volume';
export const VOLUME_HOLDS = 'session_volume_holds';

export interface VolumeDoc extends Doc {
  merchant_id: string;
  rail: string;
  day: string;
  sum_subunits: string;
  expires_at: string;
}

/** id = session id: the amount its creation added to a day's counter, until the counter expires */
export interface VolumeHold extends Doc {
  counter_id: string;
  amount_subunits: string;
  expires_at: string;
}

/** The new sum after adding `delta` (never below 0), or null when a checked addition passes the cap. */
export function nextVolume(used: bigint, delta: bigint, limit: bigint, check: boolean): bigint | null {
  if (check && used + delta > limit) return null;
  return used + delta < 0n ? 0n : used + delta;
}

export class DailyVolume {
  private readonly store: Store;
  private readonly now: () => Date;
  constructor(store: Store, now: () => Date) {
    this.store = store;
    this.now = now;
  }

  /**
   * Adds the amount to the merchant's volume of the day on this rail for session `sessionId`, if it stays
   * within `limitText` (token units) and the session holds no share yet; returns the release to call when
   * the session is not created after all.
   */
  async reserve(merchantId: string, rail: Rail, amount: bigint, limitText: string, sessionId: string): Promise<() => Promise<void>> {
    const limit = floorSubunits(limitText, rail.decimals);
    const day = this.now().toISOString().slice(0, 10);
    const id = `${merchantId}:${railKey(rail)}:${day}`;
    const expiresAt = new Date(Date.parse(`${day}T00:00:00.000Z`) + 2 * DAY_MS).toISOString();
    await retryOnConflict(async () => {
      // an earlier attempt at this very session counted it (its outcome was unknown, its hold kept)
      if (await this.store.get<VolumeHold>(VOLUME_HOLDS, sessionId)) return;
      const doc = await this.store.get<VolumeDoc>(VOLUME_COLLECTION, id);
      const used = BigInt(doc?.sum_subunits ?? '0');
      const sum = nextVolume(used, amount, limit, true);
      if (sum === null) throw dailyVolumeRefusal(limitText, rail, limit > used ? limit - used : 0n);
      const next: VolumeDoc = {
        id,
        merchant_id: merchantId,
        rail: railKey(rail),
        day,
        sum_subunits: sum.toString(),
        expires_at: expiresAt,
      };
      const hold: VolumeHold = { id: sessionId, counter_id: id, amount_subunits: amount.toString(), expires_at: expiresAt };
      await this.store.write([
        doc
          ? { op: 'cas', coll: VOLUME_COLLECTION, doc: next, expected: doc.version! }
          : { op: 'insert', coll: VOLUME_COLLECTION, doc: next },
        // a duplicate: another request for this session counted it meanwhile (the next round sees its hold)
        { op: 'insert', coll: VOLUME_HOLDS, doc: hold },
      ]);
    }, RETRY);
    return () => this.release(sessionId);
  }

  /** Takes the session's share back off its day's counter, with its hold (nothing when it holds none). */
  private release(sessionId: string): Promise<void> {
    return retryOnConflict(async () => {
      const hold = await this.store.get<VolumeHold>(VOLUME_HOLDS, sessionId);
      if (!hold) return;
      const doc = await this.store.get<VolumeDoc>(VOLUME_COLLECTION, hold.counter_id);
      const ops: WriteOp[] = [{ op: 'delete', coll: VOLUME_HOLDS, id: sessionId }];
      if (doc) {
        const { version, ...rest } = doc;
        const sum = nextVolume(BigInt(doc.sum_subunits), -BigInt(hold.amount_subunits), 0n, false)!;
        // the counter's compare-and-set orders two releases of one hold: the second finds it gone
        ops.unshift({ op: 'cas', coll: VOLUME_COLLECTION, doc: { ...rest, sum_subunits: sum.toString() }, expected: version! });
      }
      await this.store.write(ops);
    }, RETRY);
  }
}

const RETRY = {
  attempts: 100,
  retryOn: (e: unknown) => isConflict(e) || isDuplicate(e),
  maxPauseMs: (n: number) => Math.min(20, n),
  exhausted: () => rateLimited('too many concurrent session creations, retry later', { remediation: REMEDIATION.retryLater }),
};
