/**
 * A drift's life, pure: what one run's finding does to its record.
 *
 * - open: found, alerting (a `reconciliation_drift` alert and a metric series) until it stops reproducing
 *   or an operator acknowledges it;
 * - acknowledged: an operator said why it is understood (`reconcile:ack`): listed, no alert, no series. The
 *   acknowledgement covers the difference it was given for: found again with another difference (a leak
 *   that grew), it is open again;
 * - resolved: a later run looked at its place (the row, movement or address) and no longer found it; found
 *   again, it is open again.
 *
 * A run decides only about what it looked at (`examined`): a record it did not look at keeps its state, so
 * a tick that compares some wallets never closes a drift at a wallet it skipped.
 */
import type { Drift } from './drift.ts';

export type DriftState = 'open' | 'acknowledged' | 'resolved';

export interface DriftLife {
  state: DriftState;
  drift: Drift;
  first_seen_at: string;
  first_seen_run: string;
  last_seen_at: string;
  last_seen_run: string;
  resolved_at: string | null;
  resolved_by_run: string | null;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  ack_reason: string | null;
  /** the difference the acknowledgement was given for */
  ack_difference: string | null;
  /** times it came back after being resolved */
  reopened: number;
}

export interface RunMark {
  run: string;
  at: string;
}

export type Change =
  /** nothing to write */
  | { kind: 'none' }
  /** seen again in the same state (last_seen moves on) */
  | { kind: 'seen'; next: DriftLife }
  /** new, or back from resolved or from an acknowledgement of another difference: alerting */
  | { kind: 'opened'; next: DriftLife }
  /** no longer found where the run looked: its alert resolves, its series goes */
  | { kind: 'resolved'; next: DriftLife; was: DriftState };

/** The record of a drift found for the first time. */
export function firstSeen(drift: Drift, mark: RunMark): DriftLife {
  return {
    state: 'open',
    drift,
    first_seen_at: mark.at,
    first_seen_run: mark.run,
    last_seen_at: mark.at,
    last_seen_run: mark.run,
    resolved_at: null,
    resolved_by_run: null,
    acknowledged_at: null,
    acknowledged_by: null,
    ack_reason: null,
    ack_difference: null,
    reopened: 0,
  };
}

/**
 * What a run does to a record: `found` is the drift at the record's place in this run (null: not found),
 * `examined` whether the run looked at that place at all.
 */
export function transition(rec: DriftLife | null, found: Drift | null, examined: boolean, mark: RunMark): Change {
  if (!rec) return found ? { kind: 'opened', next: firstSeen(found, mark) } : { kind: 'none' };
  if (found) {
    const seen = { ...rec, drift: found, last_seen_at: mark.at, last_seen_run: mark.run };
    if (rec.state === 'open') return { kind: 'seen', next: seen };
    if (rec.state === 'acknowledged' && found.difference === rec.ack_difference) return { kind: 'seen', next: seen };
    // resolved and back, or acknowledged for another difference: it alerts again
    return {
      kind: 'opened',
      next: {
        ...seen,
        state: 'open',
        resolved_at: null,
        resolved_by_run: null,
        reopened: rec.state === 'resolved' ? rec.reopened + 1 : rec.reopened,
      },
    };
  }
  if (!examined || rec.state === 'resolved') return { kind: 'none' };
  return { kind: 'resolved', was: rec.state, next: { ...rec, state: 'resolved', resolved_at: mark.at, resolved_by_run: mark.run } };
}

/** An operator's acknowledgement of an open (or acknowledged) drift; null for a resolved one. */
export function acknowledge(rec: DriftLife, by: string, reason: string, at: string): DriftLife | null {
  if (rec.state === 'resolved') return null;
  return {
    ...rec,
    state: 'acknowledged',
    acknowledged_at: at,
    acknowledged_by: by,
    ack_reason: reason,
    ack_difference: rec.drift.difference,
  };
}
