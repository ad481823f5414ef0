/** A wallet's transactions in pages (lib/core/paging.ts pages wallets and payouts by id). */
import type { Store } from '../store/port.ts';
import { limitOf, type Page, type PageQuery } from '../core/paging.ts';
import { walletHistory, type WalletTxRow } from '../ledger/index.ts';
import { decodeTxCursor, encodeTxCursor } from './present.ts';

/** A wallet's transactions, newest first (by their sort key, not their id). */
export async function pageWalletTxs<T>(store: Store, walletId: string, q: PageQuery, present: (r: WalletTxRow) => T): Promise<Page<T>> {
  const limit = limitOf(q);
  const rows = await walletHistory(store, walletId, q.cursor !== undefined ? decodeTxCursor(q.cursor) : undefined, limit + 1);
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { data: page.map(present), has_more: more, next_cursor: more ? encodeTxCursor(page[page.length - 1].sort_key) : null };
}
