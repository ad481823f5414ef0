/**
 * A drift's life (lib/treasury/reconcile/lifecycle.ts), pure: what each run's finding does to its record,
 * and properties over random sequences of runs and acknowledgements: a run that did not look at a drift
 * never changes its state, a drift found is never resolved, an acknowledged drift alerts again only when
 * found with another difference, and a resolved one only when found again.
 */
import fc from 'fast-check';
import { acknowledge, firstSeen, transition, type DriftLife } from '../../lib/treasury/reconcile/lifecycle.ts';
import { driftId, DRIFT_ID } from '../../lib/treasury/reconcile/registry.ts';
import { driftKey, driftLine, type Drift } from '../../lib/treasury/reconcile/drift.ts';

const drift = (difference: string | null = '-100'): Drift => ({
  check: 'address',
  code: 'balance',
  chain: 'solana',
  network: 'testnet',
  row: null,
  address: '7jTQKdMiFpzhRukY55rmAh59H2MriYVGVSxjP7x7q5Ak',
  asset: 'solana:testnet:SOL',
  difference,
  wallet_id: 'wal_x',
  message: 'wallet holds less on chain',
});
const mark = (n: number) => ({ run: `rcr_${n}`, at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString() });

describe('drift lifecycle', () => {
  it('found first: open, naming the run; not found and never seen: nothing', () => {
    expect(transition(null, null, true, mark(1))).toEqual({ kind: 'none' });
    const c = transition(null, drift(), true, mark(1));
    expect(c.kind).toBe('opened');
    expect(c.kind !== 'none' && c.next).toMatchObject({
      state: 'open',
      first_seen_run: 'rcr_1',
      last_seen_run: 'rcr_1',
      resolved_at: null,
    });
  });

  it('no longer found where the run looked: resolved with when and by which run; where it did not look: unchanged', () => {
    const open = firstSeen(drift(), mark(1));
    expect(transition(open, null, false, mark(2))).toEqual({ kind: 'none' });
    const c = transition(open, null, true, mark(2));
    expect(c).toMatchObject({
      kind: 'resolved',
      was: 'open',
      next: { state: 'resolved', resolved_at: mark(2).at, resolved_by_run: 'rcr_2' },
    });
    // found again later: open again (it alerts), counted as reopened
    const back = transition(c.kind === 'resolved' ? c.next : open, drift(), true, mark(3));
    expect(back).toMatchObject({ kind: 'opened', next: { state: 'open', resolved_at: null, resolved_by_run: null, reopened: 1 } });
  });

  it('acknowledged: quiet while found with the same difference, open again with another; resolves like any', () => {
    const acked = acknowledge(firstSeen(drift('-100'), mark(1)), 'ops@host', 'known: test funds moved by hand', mark(2).at)!;
    expect(acked).toMatchObject({ state: 'acknowledged', acknowledged_by: 'ops@host', ack_difference: '-100' });
    expect(transition(acked, drift('-100'), true, mark(3))).toMatchObject({ kind: 'seen', next: { state: 'acknowledged' } });
    expect(transition(acked, drift('-250'), true, mark(3))).toMatchObject({ kind: 'opened', next: { state: 'open', reopened: 0 } });
    expect(transition(acked, null, true, mark(3))).toMatchObject({ kind: 'resolved', was: 'acknowledged' });
    // a resolved drift is not acknowledged: nothing is alerting
    const resolved = transition(acked, null, true, mark(3));
    expect(resolved.kind === 'resolved' && acknowledge(resolved.next, 'ops', 'late', mark(4).at)).toBeNull();
  });

  it('property: over random runs, state follows only what was looked at and found', () => {
    const step = fc.record({
      found: fc.option(fc.constantFrom('-100', '-250', '7'), { nil: null }),
      examined: fc.boolean(),
      ack: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        let rec: DriftLife | null = null;
        steps.forEach((s, i) => {
          const m = mark(i + 1);
          if (s.ack && rec) rec = acknowledge(rec, 'ops', 'understood', m.at) ?? rec;
          const before: DriftLife | null = rec;
          const c = transition(rec, s.found === null ? null : drift(s.found), s.examined, m);
          if (c.kind !== 'none') rec = c.next;
          if (s.found !== null) {
            // found: never resolved; open unless acknowledged for exactly this difference
            expect(rec!.state).not.toBe('resolved');
            expect(rec!.last_seen_run).toBe(m.run);
            const quiet = before?.state === 'acknowledged' && before.ack_difference === s.found;
            expect(rec!.state).toBe(quiet ? 'acknowledged' : 'open');
            expect(c.kind === 'opened').toBe(!quiet && before?.state !== 'open');
          } else if (!s.examined || !before) {
            expect(rec).toEqual(before);
          } else {
            expect(rec!.state).toBe('resolved');
            expect(rec!.resolved_by_run).toBe(before.state === 'resolved' ? before.resolved_by_run : m.run);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('a drift is named the same by every run and node, and its line carries the id to acknowledge', () => {
    const d = drift();
    const id = driftId(driftKey(d));
    expect(id).toMatch(DRIFT_ID);
    expect(driftId(driftKey({ ...d, difference: '-999', message: 'other' }))).toBe(id);
    expect(driftId(driftKey({ ...d, address: 'CgJtCVvQgcEDtaLe4JSZGDMBpr1bt8kEySYBa3ta2t67' }))).not.toBe(id);
    expect(driftLine({ ...d, id })).toBe(
      `DRIFT address balance address=${d.address} asset=solana:testnet:SOL difference=-100 id=${id}: wallet holds less on chain`,
    );
  });
});
