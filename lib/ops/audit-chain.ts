/**
 * The audit log's per-merchant hash chain. Audit rows are inserted in the same atomic write as the change
 * they record (lib/core/audit.ts) with `seal_due_at` set; a sealer on any node (the due-scanner over
 * `seal_due_at`, one row at a time) then links each row into its chain: the merchant's (`chain` =
 * merchant id) or the platform's (`chain` = "platform", for rows without a merchant). Sealing gives the
 * row `seq` (1, 2, … without gaps), `prev_hash` (the previous row's `hash`, 64 zeros for the first) and
 * `hash` = HMAC-SHA256(key, prev_hash + "\n" + canonical JSON of the row's own fields), and moves the
 * chain's head (`audit_heads`) in the same write, by compare-and-set, so two nodes never give two rows
 * one seq.
 *
 * Why seal after the insert rather than in it: the insert then needs no read and never conflicts, so a
 * change's write (an actor's, a webhook outcome's) cannot fail because another change of the same
 * merchant was audited at the same moment. The key is derived from MASTER_KEY: somebody with write access
 * to the store but not the key cannot recompute a hash after changing a row. `verifyChain` walks a chain
 * and reports the first broken link (a changed row, a removed row, a row moved, a cut tail).
 */
import { createHmac } from 'node:crypto';
import { canonicalJson } from '../core/idempotency.ts';
import { isConflict, isDuplicate, type Doc, type Store } from '../store/port.ts';

export const AUDIT_EVENTS = 'audit_events';
export const AUDIT_HEADS = 'audit_heads';
export const PLATFORM_CHAIN = 'platform';
export const GENESIS = '0'.repeat(64);
/** fields the sealer adds or the store keeps: not part of what a hash covers */
const CHAIN_FIELDS = new Set(['version', 'seq', 'prev_hash', 'hash', 'chain', 'seal_due_at', 'sealed_at']);

export interface SealedFields {
  chain: string;
  seq: number;
  prev_hash: string;
  hash: string;
}

export interface AuditHead extends Doc {
  seq: number;
  hash: string;
  updated_at: string;
}

export const chainOf = (row: Doc): string => (typeof row.merchant_id === 'string' && row.merchant_id ? row.merchant_id : PLATFORM_CHAIN);

/** The fields a row's hash covers: everything but the chain's own bookkeeping. */
export function hashedContent(row: Doc): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!CHAIN_FIELDS.has(k)) out[k] = v;
  return out;
}

export function linkHash(key: Buffer, prevHash: string, row: Doc): string {
  return createHmac('sha256', key)
    .update(`${prevHash}\n${canonicalJson(hashedContent(row))}`)
    .digest('hex');
}

/**
 * Links one claimed row into its chain (harmless when it runs twice: a sealed row is left alone).
 * Retries when another node moved the head meanwhile.
 */
export async function sealRow(store: Store, key: Buffer, claimed: Doc, now: Date): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const row = await store.get<Doc & Partial<SealedFields>>(AUDIT_EVENTS, claimed.id);
    if (!row || typeof row.seq === 'number') return false;
    const chain = chainOf(row);
    const head = await store.get<AuditHead>(AUDIT_HEADS, chain);
    const seq = (head?.seq ?? 0) + 1;
    const prev = head?.hash ?? GENESIS;
    const hash = linkHash(key, prev, row);
    const at = now.toISOString();
    const nextHead: AuditHead = { id: chain, seq, hash, updated_at: at };
    try {
      await store.write([
        {
          op: 'cas',
          coll: AUDIT_EVENTS,
          doc: { ...row, chain, seq, prev_hash: prev, hash, seal_due_at: null, sealed_at: at },
          expected: row.version!,
        },
        head
          ? { op: 'cas', coll: AUDIT_HEADS, doc: nextHead, expected: head.version! }
          : { op: 'insert', coll: AUDIT_HEADS, doc: nextHead },
      ]);
      return true;
    } catch (e) {
      if (!isConflict(e) && !isDuplicate(e)) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
    }
  }
  throw new Error(`audit row ${claimed.id}: the chain head kept moving`);
}

export interface BrokenLink {
  chain: string;
  /** the position where the chain breaks */
  seq: number;
  /** the row found there (null: missing) */
  event_id: string | null;
  reason: 'hash_mismatch' | 'prev_hash_mismatch' | 'missing_event' | 'head_mismatch';
}

export interface ChainReport {
  chain: string;
  events: number;
  ok: boolean;
  first_broken: BrokenLink | null;
}

/**
 * Walks one chain in seq order, a page at a time (a busy merchant's chain does not fit in memory); reports
 * the first broken link. A page starts again at the last seq it verified, so a second row with that seq
 * on a page boundary is still seen.
 */
export async function verifyChain(store: Store, key: Buffer, chain: string, pageSize = 1000): Promise<ChainReport> {
  if (pageSize < 2) throw new Error('pageSize must be at least 2');
  const head = await store.get<AuditHead>(AUDIT_HEADS, chain);
  const events = await store.count(AUDIT_EVENTS, { chain });
  const broken = (b: Omit<BrokenLink, 'chain'>): ChainReport => ({ chain, events, ok: false, first_broken: { chain, ...b } });
  let prev = GENESIS;
  let expectedSeq = 1;
  let lastSeq = 0;
  const seenAtLast = new Set<string>();
  for (;;) {
    const page = await store.find<Doc & SealedFields>(AUDIT_EVENTS, lastSeq === 0 ? { chain } : { chain, seq: { $gte: lastSeq } }, {
      sort: 'seq',
      limit: pageSize,
    });
    for (const row of page) {
      if (row.seq === lastSeq && seenAtLast.has(row.id)) continue;
      if (row.seq !== expectedSeq) return broken({ seq: expectedSeq, event_id: null, reason: 'missing_event' });
      if (row.prev_hash !== prev) return broken({ seq: expectedSeq, event_id: row.id, reason: 'prev_hash_mismatch' });
      if (linkHash(key, prev, row) !== row.hash) return broken({ seq: expectedSeq, event_id: row.id, reason: 'hash_mismatch' });
      prev = row.hash;
      expectedSeq++;
      if (row.seq !== lastSeq) seenAtLast.clear();
      lastSeq = row.seq;
      seenAtLast.add(row.id);
    }
    if (page.length < pageSize) break;
  }
  const verified = expectedSeq - 1;
  if ((head?.seq ?? 0) !== verified || (head?.hash ?? GENESIS) !== prev) {
    return broken({ seq: verified + 1, event_id: null, reason: head && head.seq > verified ? 'missing_event' : 'head_mismatch' });
  }
  return { chain, events, ok: true, first_broken: null };
}

/** Every chain (or one merchant's); the first broken link of each broken chain. */
export async function verifyChains(store: Store, key: Buffer, only?: string): Promise<{ ok: boolean; chains: ChainReport[] }> {
  const ids = only ? [only] : (await store.find<AuditHead>(AUDIT_HEADS, {})).map((h) => h.id);
  const chains: ChainReport[] = [];
  for (const id of ids) chains.push(await verifyChain(store, key, id));
  return { ok: chains.every((c) => c.ok), chains };
}
