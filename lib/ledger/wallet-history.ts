/**
 * A wallet's history (GET /v1/wallets/{id}/transactions): the wallet transactions of the transfers on its
 * accounts, newest first. A transfer of format 3 (./wallet-tx-ids.ts) is its own history: it carries the
 * wallet of each side and its history key, indexed (lib/store/schema/ledger.ts), so a ledger write adds
 * no row per wallet side (two rows, each with its index entry, for every transfer between two wallets).
 * Transfers of earlier formats keep their stored rows; a page merges the two in one order.
 */
import type { Filter, Store } from '../store/port.ts';
import { TRANSFERS, WALLET_TXS } from './accounts.ts';
import { walletTxRow, type LedgerTransfer, type WalletTxRow } from './transfers.ts';
import { walletTxIds, type Side } from './wallet-tx-ids.ts';

const WALLET_FIELD = { debit: 'debit_wallet_id', credit: 'credit_wallet_id' } as const;

const newestFirst = (a: WalletTxRow, b: WalletTxRow) => (a.sort_key < b.sort_key ? 1 : a.sort_key > b.sort_key ? -1 : 0);

/** The wallet's rows on one side of its transfers of format 3: up to `n`, newest first, with sort keys below `before`. */
async function sideRows(store: Store, side: Side, walletId: string, before: string | undefined, n: number): Promise<WalletTxRow[]> {
  // every sort key is its transfer's history key and one side digit, all of one length: the transfer at the
  // cursor may still hold this side's row (below the cursor's), so it is read too and its row compared.
  // A condition on the key even without a cursor: PostgreSQL then pages the index in its order (statements.ts `order`)
  const f: Filter = {
    [WALLET_FIELD[side]]: walletId,
    history_key: before === undefined ? { $exists: true } : { $lte: before.slice(0, -1) },
  };
  const transfers = await store.find<LedgerTransfer>(TRANSFERS, f, { sort: 'history_key', desc: true, limit: n + 1 });
  const rows: WalletTxRow[] = [];
  for (const t of transfers) {
    const row = walletTxRow(t, side, walletTxIds(t)[side], walletId);
    if (before === undefined || row.sort_key < before) rows.push(row);
  }
  return rows.slice(0, n);
}

/**
 * Up to `n` of the wallet's transactions, newest first, with sort keys (`<created_at>|<id>`) below `before`
 * (none: from the newest): its stored rows and its transfers of format 3, merged.
 */
export async function walletHistory(store: Store, walletId: string, before: string | undefined, n: number): Promise<WalletTxRow[]> {
  const stored: Filter = { wallet_id: walletId, sort_key: before === undefined ? { $exists: true } : { $lt: before } };
  const lists = await Promise.all([
    store.find<WalletTxRow>(WALLET_TXS, stored, { sort: 'sort_key', desc: true, limit: n }),
    sideRows(store, 'debit', walletId, before, n),
    sideRows(store, 'credit', walletId, before, n),
  ]);
  return lists.flat().sort(newestFirst).slice(0, n);
}
