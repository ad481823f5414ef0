/**
 * The platform's payout limits, one rule for every way money leaves on chain (a payout, an agent spend
 * executed as a payout): PAYOUT_AMOUNT_LIMIT per payout and DAILY_PAYOUT_LIMIT per merchant, rail and UTC
 * day, counted in `payout_volume` by a write that commits with the payout (compare-and-set: racing
 * payouts re-read and decide again). Limits are in token units; empty means no limit.
 */
import { floorSubunits } from '../core/money.ts';
import type { Doc, Store, WriteOp } from '../store/port.ts';

export interface PayoutLimits {
  payoutAmountLimit: string | null;
  dailyPayoutLimit: string | null;
}

export const PAYOUT_VOLUME = 'payout_volume';
const DAY_MS = 86_400_000;

interface VolumeDoc extends Doc {
  merchant_id: string;
  rail: string;
  day: string;
  sum_subunits: string;
  expires_at: string;
}

/** whether `amount` passes PAYOUT_AMOUNT_LIMIT */
export const withinAmountLimit = (limits: PayoutLimits, amount: bigint, decimals: number): boolean =>
  limits.payoutAmountLimit === null || amount <= floorSubunits(limits.payoutAmountLimit, decimals);

export type VolumeCheck = { ok: true; op: WriteOp | null } | { ok: false; left: bigint };

/** The day's payout volume after this payout, as a write, or how much is left when it would pass the limit. */
export async function dailyVolume(
  store: Store,
  limits: PayoutLimits,
  merchantId: string,
  rail: { key: string; decimals: number },
  amount: bigint,
  now: Date,
): Promise<VolumeCheck> {
  if (limits.dailyPayoutLimit === null) return { ok: true, op: null };
  const limit = floorSubunits(limits.dailyPayoutLimit, rail.decimals);
  const day = now.toISOString().slice(0, 10);
  const id = `${merchantId}:${rail.key}:${day}`;
  const doc = await store.get<VolumeDoc>(PAYOUT_VOLUME, id);
  const used = BigInt(doc?.sum_subunits ?? '0');
  if (used + amount > limit) return { ok: false, left: limit > used ? limit - used : 0n };
  const next: VolumeDoc = {
    id,
    merchant_id: merchantId,
    rail: rail.key,
    day,
    sum_subunits: (used + amount).toString(),
    expires_at: new Date(Date.parse(`${day}T00:00:00.000Z`) + 2 * DAY_MS).toISOString(),
  };
  return {
    ok: true,
    op: doc ? { op: 'cas', coll: PAYOUT_VOLUME, doc: next, expected: doc.version! } : { op: 'insert', coll: PAYOUT_VOLUME, doc: next },
  };
}
