/**
 * The windows' sums over an agent wallet's spend buckets without walking them. Per rail, the buckets in
 * time order (by `last_at`) with running totals: a window's used amount and count are two binary searches
 * instead of a pass that made a BigInt of every bucket for every attempt. A busy wallet keeps a bucket per
 * minute of its longest window (1,440 for a day), and that pass was then most of a spend's CPU.
 *
 * A buckets array is never changed (a new state holds a new array), so an index belongs to its array (a
 * WeakMap), built on first use. `fold` (windows.ts) carries its input's index over to the array it returns
 * when the folded spend is its rail's latest (a spend made now: nearly always); after any other change the
 * new array's index is built on first use.
 */
import type { SpendBucket } from './state.ts';

/**
 * One rail's buckets in last_at order with running totals. The arrays are shared by the versions of the
 * index that fold makes one from another (a spend per attempt): a version reads their first `n` entries
 * (`amounts` and `counts`: n + 1), and they are only ever appended to, so an older version never sees a
 * change. A fold into the latest bucket makes a version whose `last` stands for entry n - 1 instead: O(1)
 * per attempt, where copying the arrays made ~50 KB of garbage per attempt for a day of buckets.
 */
interface RailTotals {
  buckets: SpendBucket[];
  at: number[];
  /** amounts[k]: the sum of the first k buckets' amounts (k = 0 … n); counts likewise */
  amounts: bigint[];
  counts: number[];
  n: number;
  /** the latest bucket as a fold left it: its time, and the running totals through it (entry n of amounts and counts) */
  last: { bucket: SpendBucket; at: number; amount: bigint; count: number } | null;
}
type BucketIndex = Map<string, RailTotals>;

const INDEXES = new WeakMap<readonly SpendBucket[], BucketIndex>();
const NONE = { amount: 0n, count: 0 };

const atOf = (r: RailTotals, k: number) => (r.last !== null && k === r.n - 1 ? r.last.at : r.at[k]);
const amountOf = (r: RailTotals, k: number) => (r.last !== null && k === r.n ? r.last.amount : r.amounts[k]);
const countOf = (r: RailTotals, k: number) => (r.last !== null && k === r.n ? r.last.count : r.counts[k]);
const bucketOf = (r: RailTotals, k: number) => (r.last !== null && k === r.n - 1 ? r.last.bucket : r.buckets[k]);

function totalsOf(list: SpendBucket[]): RailTotals {
  const at: number[] = [];
  const amounts = [0n];
  const counts = [0];
  for (let k = 0; k < list.length; k++) {
    at.push(list[k].last_at);
    amounts.push(amounts[k] + BigInt(list[k].amount));
    counts.push(counts[k] + list[k].count);
  }
  return { buckets: list, at, amounts, counts, n: list.length, last: null };
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
function firstAfter(r: RailTotals, t: number): number {
  let lo = 0;
  let hi = r.n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (atOf(r, mid) > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Amount and count of the rail's buckets whose last spend was made in (from, to] (ms). */
export function bucketSum(buckets: readonly SpendBucket[], rail: string, from: number, to: number): { amount: bigint; count: number } {
  const r = indexOf(buckets).get(rail);
  if (!r) return NONE;
  const i = firstAfter(r, from);
  const j = firstAfter(r, to);
  return j > i ? { amount: amountOf(r, j) - amountOf(r, i), count: countOf(r, j) - countOf(r, i) } : NONE;
}

/** The earliest last spend of any bucket (Infinity when there is none): whether a bucket has left the windows. */
export function earliestBucket(buckets: readonly SpendBucket[]): number {
  let min = Infinity;
  for (const r of indexOf(buckets).values()) if (r.n > 0 && atOf(r, 0) < min) min = atOf(r, 0);
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
  let carried: RailTotals;
  if (prev !== null) {
    // the latest bucket, folded into again (a spend made now, after others this minute): O(1)
    if (!r || r.n === 0 || bucketOf(r, r.n - 1) !== prev || atOf(r, r.n - 1) > next.last_at) return;
    const before = r.n - 1;
    carried = {
      ...r,
      last: { bucket: next, at: next.last_at, amount: amountOf(r, before) + BigInt(next.amount), count: countOf(r, before) + next.count },
    };
  } else {
    // a new latest bucket (a new minute): appended in place when nothing was appended after this version's
    // entries and nothing stands in for its last one, else onto copies (about once a minute)
    if (r && r.n > 0 && atOf(r, r.n - 1) > next.last_at) return;
    let base: RailTotals;
    if (r && r.last === null && r.at.length === r.n) base = r;
    else if (r) {
      const k = r.n;
      base = {
        buckets: Array.from({ length: k }, (_, i) => bucketOf(r, i)),
        at: Array.from({ length: k }, (_, i) => atOf(r, i)),
        amounts: Array.from({ length: k + 1 }, (_, i) => amountOf(r, i)),
        counts: Array.from({ length: k + 1 }, (_, i) => countOf(r, i)),
        n: k,
        last: null,
      };
    } else base = { buckets: [], at: [], amounts: [0n], counts: [0], n: 0, last: null };
    const k = base.n;
    base.buckets.push(next);
    base.at.push(next.last_at);
    base.amounts.push(base.amounts[k] + BigInt(next.amount));
    base.counts.push(base.counts[k] + next.count);
    carried = { ...base, n: k + 1, last: null };
  }
  const out = new Map(idx);
  out.set(next.rail, carried);
  INDEXES.set(to, out);
}
