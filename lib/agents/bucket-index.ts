/**
 * The windows' sums over an agent wallet's spend buckets without walking them. Per rail, the buckets in
 * time order (by `last_at`) with running totals: a window's used amount and count are two binary searches
 * instead of a pass that made a BigInt of every bucket for every attempt. A busy wallet keeps a bucket per
 * minute of its longest window (1,440 for a day), and that pass was then most of a spend's CPU.
 *
 * A buckets array is never changed (a new state holds a new array), so an index belongs to its array (a
 * WeakMap), built on first use. `fold` (windows.ts) carries its input's index over to the array it returns
 * when the folded spend is its rail's latest (a spend made now: nearly always), copying the rail's arrays
 * (pointers and numbers, no BigInt work); after any other change the new array's index is built on first use.
 */
import type { SpendBucket } from './state.ts';

interface RailTotals {
  /** the rail's buckets in last_at order */
  buckets: SpendBucket[];
  at: number[];
  /** amounts[k]: the sum of the first k buckets' amounts (k = 0 … n); counts likewise */
  amounts: bigint[];
  counts: number[];
}
type BucketIndex = Map<string, RailTotals>;

const INDEXES = new WeakMap<readonly SpendBucket[], BucketIndex>();
const NONE = { amount: 0n, count: 0 };

function totalsOf(list: SpendBucket[]): RailTotals {
  const at: number[] = [];
  const amounts = [0n];
  const counts = [0];
  for (let k = 0; k < list.length; k++) {
    at.push(list[k].last_at);
    amounts.push(amounts[k] + BigInt(list[k].amount));
    counts.push(counts[k] + list[k].count);
  }
  return { buckets: list, at, amounts, counts };
}

function indexOf(buckets: readonly SpendBucket[]): BucketIndex {
  let idx = INDEXES.get(buckets);
  if (!idx) {
    const byRail = new Map<string, SpendBucket[]>();
    for (const b of buckets) {
      let list = byRail.get(b.rail);
      if (!list) byRail.set(b.rail, (list = []));
      list.push(b);
    }
    idx = new Map();
    for (const [rail, list] of byRail) idx.set(rail, totalsOf(list.sort((x, y) => x.last_at - y.last_at)));
    INDEXES.set(buckets, idx);
  }
  return idx;
}

/** the first position whose time is after t */
function firstAfter(at: number[], t: number): number {
  let lo = 0;
  let hi = at.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at[mid] > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Amount and count of the rail's buckets whose last spend was made in (from, to] (ms). */
export function bucketSum(buckets: readonly SpendBucket[], rail: string, from: number, to: number): { amount: bigint; count: number } {
  const r = indexOf(buckets).get(rail);
  if (!r) return NONE;
  const i = firstAfter(r.at, from);
  const j = firstAfter(r.at, to);
  return j > i ? { amount: r.amounts[j] - r.amounts[i], count: r.counts[j] - r.counts[i] } : NONE;
}

/** The earliest last spend of any bucket (Infinity when there is none): whether a bucket has left the windows. */
export function earliestBucket(buckets: readonly SpendBucket[]): number {
  let min = Infinity;
  for (const r of indexOf(buckets).values()) if (r.at.length && r.at[0] < min) min = r.at[0];
  return min;
}

/**
 * Gives `to` (fold's result from `from`, where `prev`, a bucket of `from` or null for a new one, became
 * `next`) the index of `from` with that change, when `next` is its rail's latest bucket and `prev` was.
 * Otherwise `to` gets its own index on first use.
 */
export function carryIndex(from: readonly SpendBucket[], to: readonly SpendBucket[], prev: SpendBucket | null, next: SpendBucket): void {
  const idx = INDEXES.get(from);
  if (!idx) return;
  const r = idx.get(next.rail);
  const n = r ? r.buckets.length : 0;
  if (r && n > 0 && (r.at[n - 1] > next.last_at || (prev !== null && r.buckets[n - 1] !== prev))) return;
  if (prev !== null && !r) return;
  const keep = prev ? n - 1 : n;
  const buckets = r ? r.buckets.slice(0, keep) : [];
  const at = r ? r.at.slice(0, keep) : [];
  const amounts = r ? r.amounts.slice(0, keep + 1) : [0n];
  const counts = r ? r.counts.slice(0, keep + 1) : [0];
  buckets.push(next);
  at.push(next.last_at);
  amounts.push(amounts[keep] + BigInt(next.amount));
  counts.push(counts[keep] + next.count);
  const carried = new Map(idx);
  carried.set(next.rail, { buckets, at, amounts, counts });
  INDEXES.set(to, carried);
}
