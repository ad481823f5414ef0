/**
 * The drifts on record (`recon_drifts`), one per place (driftKey: code, network, row, address, asset),
 * id `drf_<hash of the key>` so every run and every node names a drift the same way. Each run of a network
 * applies its findings (lifecycle.ts): new and returning drifts open (they alert), the ones the run looked
 * at and no longer found resolve (their alert resolves), acknowledged ones stay quiet unless their
 * difference changes. `reconcile --deep` lists the open ones; `--all` the acknowledged and resolved too.
 */
import { sha256Hex } from '../../core/secrets.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../../store/port.ts';
import { driftKey, type Drift, type DriftCheck, type DriftCode } from './drift.ts';
import { acknowledge, transition, type DriftLife, type DriftState, type RunMark } from './lifecycle.ts';

export const RECON_DRIFTS = 'recon_drifts';

export interface DriftRecordDoc extends Doc, DriftLife {
  key: string;
  chain: string;
  network: string;
  check: DriftCheck;
  code: DriftCode;
  updated_at: string;
}

/** A drift as reports show it: the drift, its record id and its life. */
export type DriftView = Drift &
  Pick<
    DriftRecordDoc,
    'state' | 'first_seen_at' | 'last_seen_at' | 'resolved_at' | 'resolved_by_run' | 'acknowledged_at' | 'acknowledged_by' | 'ack_reason'
  > & { id: string };

export const driftId = (key: string): string => `drf_${sha256Hex(key).slice(0, 26)}`;
export const DRIFT_ID = /^drf_[0-9a-f]{26}$/;

export const driftView = (r: DriftRecordDoc): DriftView => ({
  ...r.drift,
  id: r.id,
  state: r.state,
  first_seen_at: r.first_seen_at,
  last_seen_at: r.last_seen_at,
  resolved_at: r.resolved_at,
  resolved_by_run: r.resolved_by_run,
  acknowledged_at: r.acknowledged_at,
  acknowledged_by: r.acknowledged_by,
  ack_reason: r.ack_reason,
});

export interface SyncResult {
  /** open drifts found by this run: each raises (or keeps open) its alert */
  raise: DriftRecordDoc[];
  /** drifts this run resolved: their alert resolves */
  resolved: DriftRecordDoc[];
}

const toDoc = (key: string, life: DriftLife, at: string, prev: DriftRecordDoc | null): DriftRecordDoc => ({
  ...(prev ?? {}),
  ...life,
  id: driftId(key),
  key,
  chain: life.drift.chain,
  network: life.drift.network,
  check: life.drift.check,
  code: life.drift.code,
  updated_at: at,
});

/**
 * Applies one run of one network: `found` its drifts, `examined(record)` whether it looked at that
 * record's place. A record written by another runner meanwhile is read again and the change re-applied.
 */
export async function syncDrifts(
  store: Store,
  net: { chain: string; network: string },
  found: Drift[],
  examined: (rec: DriftRecordDoc) => boolean,
  mark: RunMark,
): Promise<SyncResult> {
  const out: SyncResult = { raise: [], resolved: [] };
  const byKey = new Map<string, Drift>();
  for (const d of found) if (!byKey.has(driftKey(d))) byKey.set(driftKey(d), d);
  const active = await store.find<DriftRecordDoc>(RECON_DRIFTS, {
    chain: net.chain,
    network: net.network,
    state: { $in: ['open', 'acknowledged'] },
  });
  const keys = new Set([...byKey.keys(), ...active.map((r) => r.key)]);
  const cached = new Map(active.map((r) => [r.key, r]));
  for (const key of keys) {
    const drift = byKey.get(key) ?? null;
    for (let attempt = 0; attempt < 10; attempt++) {
      const prev = attempt === 0 && cached.has(key) ? cached.get(key)! : await store.get<DriftRecordDoc>(RECON_DRIFTS, driftId(key));
      const change = transition(prev, drift, prev ? examined(prev) : false, mark);
      if (change.kind === 'none') break;
      const next = toDoc(key, change.next, mark.at, prev);
      try {
        await store.write([
          prev
            ? { op: 'cas', coll: RECON_DRIFTS, doc: next, expected: prev.version ?? 0 }
            : { op: 'insert', coll: RECON_DRIFTS, doc: next },
        ]);
      } catch (e) {
        if (isConflict(e) || isDuplicate(e)) continue;
        throw e;
      }
      if (change.kind === 'resolved' && change.was === 'open') out.resolved.push(next);
      if (next.state === 'open' && drift) out.raise.push(next);
      break;
    }
  }
  return out;
}

/** The drifts on record of a network (all networks without `net`) in the given states. */
export async function driftsOnRecord(
  store: Store,
  states: DriftState[],
  net?: { chain: string; network: string },
): Promise<DriftRecordDoc[]> {
  const rows = await store.find<DriftRecordDoc>(RECON_DRIFTS, { ...(net ?? {}), state: { $in: states } });
  return rows.sort((a, b) => (a.first_seen_at < b.first_seen_at ? -1 : a.first_seen_at > b.first_seen_at ? 1 : a.id < b.id ? -1 : 1));
}

export type AckOutcome =
  { ok: true; record: DriftRecordDoc; was: DriftState } | { ok: false; reason: 'not_found' | 'resolved'; record: DriftRecordDoc | null };

/**
 * Marks a drift acknowledged, with who and why; `extra` are written in the same atomic write (its audit
 * row). A resolved drift is not acknowledged (nothing to quiet: it is not found any more).
 */
export async function acknowledgeDrift(
  store: Store,
  id: string,
  by: string,
  reason: string,
  at: string,
  extra: (rec: DriftRecordDoc) => Parameters<Store['write']>[0],
): Promise<AckOutcome> {
  for (let attempt = 1; ; attempt++) {
    const prev = await store.get<DriftRecordDoc>(RECON_DRIFTS, id);
    if (!prev) return { ok: false, reason: 'not_found', record: null };
    const life = acknowledge(prev, by, reason, at);
    if (!life) return { ok: false, reason: 'resolved', record: prev };
    const next: DriftRecordDoc = { ...prev, ...life, updated_at: at };
    try {
      await store.write([{ op: 'cas', coll: RECON_DRIFTS, doc: next, expected: prev.version ?? 0 }, ...extra(next)]);
      return { ok: true, record: next, was: prev.state };
    } catch (e) {
      // a run wrote the record meanwhile: read it again (a few times; runs write it once per run)
      if (!isConflict(e) || attempt >= 20) throw e;
    }
  }
}
