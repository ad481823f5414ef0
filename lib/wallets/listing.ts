/** Pages of wallets, payouts and wallet transactions: `{data, next_cursor, has_more}`, newest first. */
import { invalidCursor, invalidLimit } from '../core/errors.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../catalog/rules.ts';
import type { Doc, Filter, Store } from '../store/port.ts';
import { WALLET_TXS, type WalletTxRow } from '../ledger/index.ts';
import { decodeTxCursor, encodeTxCursor } from './present.ts';

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}
export interface PageQuery {
  cursor?: string;
  limit?: string;
}

function limitOf(q: PageQuery): number {
  const limit = parseLimit(q.limit);
  if (typeof limit === 'string') throw invalidLimit(limit);
  return limit;
}

/** Rows of a collection with prefixed, time-sortable ids (wal_…, po_…), newest first. */
export async function pageById<D extends Doc, T>(
  store: Store,
  coll: string,
  filter: Filter,
  q: PageQuery,
  present: (d: D) => T | Promise<T>,
): Promise<Page<T>> {
  const limit = limitOf(q);
  const f: Filter = { ...filter };
  if (q.cursor !== undefined) {
    const after = decodeCursor(q.cursor);
    if (!after) throw invalidCursor();
    f.id = { $lt: after };
  }
  const rows = await store.find<D>(coll, f, { desc: true, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { data: await Promise.all(page.map(present)), has_more: more, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
}

/** A wallet's transactions, newest first. */
export async function pageWalletTxs<T>(store: Store, walletId: string, q: PageQuery, present: (r: WalletTxRow) => T): Promise<Page<T>> {
  const limit = limitOf(q);
  const f: Filter = { wallet_id: walletId };
  if (q.cursor !== undefined) f.sort_key = { $lt: decodeTxCursor(q.cursor) };
  const rows = await store.find<WalletTxRow>(WALLET_TXS, f, { sort: 'sort_key', desc: true, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { data: page.map(present), has_more: more, next_cursor: more ? encodeTxCursor(page[page.length - 1].sort_key) : null };
}
