/** An agent wallet's windows: folding settled spends into minute buckets keeps every amount and count. */
import fc from 'fast-check';
import { fold, add } from '../../lib/agents/windows.ts';
import type { SpendBucket, SpendEntry } from '../../lib/agents/state.ts';

const spend = fc.record({
  rail: fc.constantFrom('ethereum:testnet:USDC', 'solana:testnet:USDC'),
  amount: fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String),
  atMs: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_000_000 + 86_400_000 }),
});

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
});
