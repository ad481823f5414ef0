/**
 * Reconciliation's own records, so that each run only reads what is new (bounded RPC cost):
 * - `recon_rows`: one per final outbox row checked (id = the row's id), with its landed transaction, the
 *   gas wallet's change in it and its drifts; also one per transfer out found on chain without a row
 *   (id `outflow:<chain>:<network>:<hash>`).
 * - `recon_txs`: id `<chain>:<network>:<hash>` → the row whose transaction it is. The insert is the
 *   uniqueness check: a second row with the same hash or signature is a `shared_transaction` drift.
 * - `recon_groups`: one per movement (the rows of one payout, sweep, custody move, x402 settlement or
 *   drip, id `<chain>:<network>:<ref>`), checked once it is over: what the gas wallet spent on it against
 *   what the ledger books, and platform money that ended in a merchant balance.
 * - `recon_state`: cursors (final rows, blocks, signatures per address) and the gas wallets' calibration.
 */
import { isConflict, isDuplicate, type Doc, type Store } from '../../store/port.ts';
import type { Drift } from './drift.ts';

export const RECON_ROWS = 'recon_rows';
export const RECON_TXS = 'recon_txs';
export const RECON_GROUPS = 'recon_groups';
export const RECON_STATE = 'recon_state';

export interface ReconRowDoc extends Doc {
  chain: string;
  network: string;
  purpose: string;
  ref: string | null;
  status: 'ok' | 'drift';
  /** the landed transaction (confirmed, or a failed one that landed and paid its fee) */
  hash: string | null;
  block: number | null;
  /** the gas wallet's native change in that transaction (negative: it paid) */
  gas_delta: string;
  drifts: Drift[];
  checked_at: string;
}

export interface ReconGroupDoc extends Doc {
  chain: string;
  network: string;
  ref: string;
  status: 'open' | 'ok' | 'drift';
  rows: string[];
  /** what the gas wallet spent on chain and what the ledger books for it (smallest units) */
  spent: string | null;
  booked: string | null;
  drifts: Drift[];
  updated_at: string;
}

export interface GasStateDoc extends Doc {
  /** chain balance − books at calibration (what the gas wallet held that no booking explains) */
  offset: string;
  /** the block or slot of the calibration: later movements and inflows count */
  height: number;
  /** drips (outbox-only platform costs) landed after the calibration: the gas wallet's change */
  faucet: string;
  /** inflows from outside found after the calibration (funding) */
  funding: string;
  updated_at: string;
}

/** Reads a state document. */
export const readState = <T extends Doc>(store: Store, id: string) => store.get<T>(RECON_STATE, id);

/**
 * Writes one of reconciliation's records by compare-and-set on the version read (insert when new); false
 * when another runner wrote it first (its outcome stands; ours is repeated next time, harmlessly).
 */
export async function writeRecord<T extends Doc>(store: Store, coll: string, prev: T | null, next: T): Promise<boolean> {
  try {
    await store.write([prev ? { op: 'cas', coll, doc: next, expected: prev.version ?? 0 } : { op: 'insert', coll, doc: next }]);
    return true;
  } catch (e) {
    if (isConflict(e) || isDuplicate(e)) return false;
    throw e;
  }
}

export const writeState = <T extends Doc>(store: Store, prev: T | null, next: T) => writeRecord(store, RECON_STATE, prev, next);

/** Adds to the numeric fields of a state document, retrying lost races. */
export async function addToState<T extends Doc>(store: Store, id: string, add: (cur: T) => T | null): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const cur = await readState<T>(store, id);
    if (!cur) return;
    const next = add(cur);
    if (!next || (await writeState(store, cur, next))) return;
  }
}
