/**
 * DAILY_VOLUME_LIMIT: a merchant's session volume per rail and UTC day, one counter document per
 * (merchant, rail, day) in `session_volume`, reserved by compare-and-set before the session is created
 * and released when the creation fails. The decision is pure (`nextVolume`); the loop is lib/core/retry.ts.
 */
import { REMEDIATION, rateLimited } from '../core/errors.ts';
import { retryOnConflict } from '../core/retry.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../store/port.ts';
import { railKey, type Rail } from '../../config/rails.ts';
import { floorSubunits } from '../core/money.ts';
import { dailyVolumeRefusal } from './policy.ts';

const DAY_MS = 86_400_000;
export const VOLUME_COLLECTION = 'session_volume';

export interface VolumeDoc extends Doc {
  merchant_id: string;
  rail: string;
  day: string;
  sum_subunits: string;
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
   * Adds the amount to the merchant's volume of the day on this rail if it stays within `limitText`
   * (token units); returns the release to call when the session is not created after all.
   */
  async reserve(merchantId: string, rail: Rail, amount: bigint, limitText: string): Promise<() => Promise<void>> {
    const limit = floorSubunits(limitText, rail.decimals);
    const day = this.now().toISOString().slice(0, 10);
    const id = `${merchantId}:${railKey(rail)}:${day}`;
    const expiresAt = new Date(Date.parse(`${day}T00:00:00.000Z`) + 2 * DAY_MS).toISOString();
    const change = (delta: bigint, check: boolean) =>
      retryOnConflict(
        async () => {
          const doc = await this.store.get<VolumeDoc>(VOLUME_COLLECTION, id);
          const used = BigInt(doc?.sum_subunits ?? '0');
          const sum = nextVolume(used, delta, limit, check);
          if (sum === null) throw dailyVolumeRefusal(limitText, rail, limit > used ? limit - used : 0n);
          const next: VolumeDoc = {
            id,
            merchant_id: merchantId,
            rail: railKey(rail),
            day,
            sum_subunits: sum.toString(),
            expires_at: expiresAt,
          };
          await this.store.write([
            doc
              ? { op: 'cas', coll: VOLUME_COLLECTION, doc: next, expected: doc.version! }
              : { op: 'insert', coll: VOLUME_COLLECTION, doc: next },
          ]);
        },
        {
          attempts: 100,
          retryOn: (e) => isConflict(e) || isDuplicate(e),
          maxPauseMs: (n) => Math.min(20, n),
          exhausted: () => rateLimited('too many concurrent session creations, retry later', { remediation: REMEDIATION.retryLater }),
        },
      );
    await change(amount, true);
    return () => change(-amount, false);
  }
}
