/**
 * An agent wallet's windows: folding settled spends into minute buckets keeps every amount and count, and
 * the windows' sums through the bucket index (carried along by fold or built afresh) are those of a pass
 * over every bucket and in-flight spend.
 */
import fc from 'fast-check';
import { fold, add, windowSums } from '../../lib/agents/windows.ts';
import { bucketSum, earliestBucket } from '../../lib/agents/bucket-index.ts';
import { windowUsage, type CountedSpend, type RailLimits } from '../../lib/spend/policy.ts';
import type { SpendBucket, SpendEntry } from '../../lib/agents/state.ts';

const spend = fc.record({
  rail: fc.constantFrom('ethereum:testnet:USDC', 'solana:testnet:USDC'),
  amount: fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String),
  atMs: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_000 + 86_400_000 }),
});

/** amount and count of the rail's buckets whose last spend is in (from, to]: a pass over every bucket */
function brute(buckets: SpendBucket[], rail: string, from: number, to: number) {
  let amount = 0n;
  let count = 0;
  for (const b of buckets)
    if (b.rail === rail && b.last_at > from && b.last_at <= to) {
      amount += BigInt(b.amount);
      count += b.count;
    }
  return { amount, count };
}

describe('agent wallet windows', () => {
  it('fold keeps the sum and count of every rail, one bucket per rail and minute, last_at the latest spend', () => {
    fc.assert(
      fc.property(fc.array(spend, { maxLength: 60 }), (spends) => {
        let buckets: SpendBucket[] = [];
        for (const s of spends) buckets = fold(buckets, s.rail, s.amount, s.atMs);
        for (const rail of new Set(spends.map((s) => s.rail))) {
          const mine = spends.filter((s) => s.rail === rail);
          const theirs = buckets.filter((b) => b.rail === rail);
          expect(theirs.reduce((t, b) => t + BigInt(b.amount), 0n)).toBe(mine.reduce((t, s) => t + BigInt(s.amount), 0n));
          expect(theirs.reduce((t, b) => t + b.count, 0)).toBe(mine.length);
        }
        const keys = buckets.map((b) => `${b.rail}@${b.minute}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const b of buckets) {
          expect(b.minute % 60_000).toBe(0);
          const inside = spends.filter((s) => s.rail === b.rail && s.atMs - (s.atMs % 60_000) === b.minute);
          expect(b.last_at).toBe(Math.max(...inside.map((s) => s.atMs)));
        }
      }),
    );
  });

  it('add folds a ledger-settled spend at once and tracks an on-chain one until it settles', () => {
    const entry = (final: boolean): SpendEntry => ({
      attempt_id: 'sa_1',
      transfer_id: 'tr_1',
      rail: 'ethereum:testnet:USDC',
      amount: '7',
      at: '2026-01-10T12:00:30.000Z',
      final,
    });
    const settled = add({ spends: [], buckets: [] }, entry(true));
    expect(settled).toEqual({
      spends: [],
      buckets: [
        {
          rail: 'ethereum:testnet:USDC',
          minute: Date.parse('2026-01-10T12:00:00.000Z'),
          last_at: Date.parse('2026-01-10T12:00:30.000Z'),
          amount: '7',
          count: 1,
        },
      ],
    });
    const onChain = add({ spends: [], buckets: [] }, entry(false));
    expect(onChain).toEqual({ spends: [entry(false)], buckets: [] });
  });

  it('sums a window through the index exactly as a pass over the buckets does, after any folds, carried or built afresh', () => {
    const base = 1_700_000_000_000;
    // spends mostly in time order (as they are made), some late (an on-chain spend folded when it settles)
    const timed = fc.record({
      rail: fc.constantFrom('ethereum:testnet:USDC', 'solana:testnet:USDC'),
      amount: fc.bigInt({ min: 1n, max: 10n ** 24n }).map(String),
      step: fc.integer({ min: 0, max: 90_000 }),
      late: fc.option(fc.integer({ min: 0, max: 3_600_000 }), { freq: 5 }),
    });
    fc.assert(
      fc.property(
        fc.array(timed, { maxLength: 80 }),
        fc.array(fc.tuple(fc.integer({ min: -120_000, max: 7_200_000 }), fc.integer({ min: 1, max: 7_200_000 })), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.boolean(),
        (spends, probes, askEarly) => {
          let t = base;
          let buckets: SpendBucket[] = [];
          for (const s of spends) {
            t += s.step;
            // asking before folding builds an index that the next folds carry (or drop) along
            if (askEarly) bucketSum(buckets, s.rail, t - 3_600_000, t);
            buckets = fold(buckets, s.rail, s.amount, s.late === null ? t : Math.max(base, t - s.late));
          }
          const fresh = buckets.map((b) => ({ ...b }));
          for (const rail of ['ethereum:testnet:USDC', 'solana:testnet:USDC'])
            for (const [back, width] of probes) {
              const to = t - back;
              const from = to - width;
              const want = brute(buckets, rail, from, to);
              expect(bucketSum(buckets, rail, from, to)).toEqual(want);
              expect(bucketSum(fresh, rail, from, to)).toEqual(want);
            }
          expect(earliestBucket(buckets)).toBe(buckets.length ? Math.min(...buckets.map((b) => b.last_at)) : Infinity);
        },
      ),
    );
  });

  it('gives every window of a policy the usage a list of the counted spends gives, in-flight chain spends included', () => {
    const rail = 'ethereum:testnet:USDC';
    const limits: RailLimits = {
      per_attempt: null,
      approval_above: null,
      windows: [60_000, 3_600_000, 86_400_000].map((ms) => ({ duration: `${ms}ms`, ms, max_subunits: 10n ** 30n, max_count: 1_000_000 })),
    };
    const base = 1_700_000_000_000;
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ dt: fc.integer({ min: 0, max: 4 * 3_600_000 }), amount: fc.integer({ min: 1, max: 10 ** 6 }), final: fc.boolean() }),
          {
            maxLength: 60,
          },
        ),
        fc.integer({ min: 0, max: 30 * 3_600_000 }),
        (made, after) => {
          let w = { spends: [] as SpendEntry[], buckets: [] as SpendBucket[] };
          for (const [k, m] of made.entries())
            w = add(w, {
              attempt_id: `sa_${k}`,
              transfer_id: `sa_${k}`,
              rail,
              amount: String(m.amount),
              at: new Date(base + m.dt).toISOString(),
              final: m.final,
            });
          const list: CountedSpend[] = [
            ...w.buckets.map((b) => ({ rail: b.rail, amount: BigInt(b.amount), at: b.last_at, count: b.count })),
            ...w.spends.map((s) => ({ rail: s.rail, amount: BigInt(s.amount), at: Date.parse(s.at) })),
          ];
          const now = new Date(base + after);
          expect(windowUsage(limits, rail, windowSums(w), now)).toEqual(windowUsage(limits, rail, list, now));
        },
      ),
    );
  });

  it('keeps every version of the index right when folds branch from older versions (a batch decided again)', () => {
    const base = 1_700_000_000_000;
    const op = fc.record({
      // which version to fold onto: mostly the latest, sometimes an older one
      back: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) }),
      rail: fc.constantFrom('ethereum:testnet:USDC', 'solana:testnet:USDC'),
      step: fc.integer({ min: 0, max: 70_000 }),
      amount: fc.integer({ min: 1, max: 1000 }).map(String),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
        const versions: Array<{ buckets: SpendBucket[]; t: number }> = [{ buckets: [], t: base }];
        for (const o of ops) {
          const from = versions[Math.max(0, versions.length - 1 - o.back)];
          bucketSum(from.buckets, o.rail, from.t - 600_000, from.t); // its index exists, so the fold carries it
          const t = from.t + o.step;
          versions.push({ buckets: fold(from.buckets, o.rail, o.amount, t), t });
        }
        for (const v of versions)
          for (const rail of ['ethereum:testnet:USDC', 'solana:testnet:USDC'])
            for (const width of [60_000, 600_000, 3_600_000, Infinity]) {
              expect(bucketSum(v.buckets, rail, v.t - width, v.t)).toEqual(brute(v.buckets, rail, v.t - width, v.t));
            }
      }),
    );
  });
});
