/**
 * Wallet history across the formats of its transactions (lib/ledger/wallet-tx-ids.ts), on every adapter
 * (SQLite and PostgreSQL; MongoDB where MONGO_URL is set): a transfer written before format 3 keeps its
 * stored rows (format 1: sha256 row ids and no marker; format 2: time-ordered ids), and one still pending
 * posts or voids onto them; a transfer of format 3 writes no row and is its own history. The history
 * pages through all of them in one order, and the ledger check holds over all of them.
 */
import fc from 'fast-check';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import type { Store, WriteOp } from '../../lib/store/port.ts';
import {
  TRANSFERS,
  WALLET_TXS,
  WTX_FORMAT,
  LedgerBatch,
  accountId,
  balance,
  checkStoredLedger,
  postPendingOps,
  voidPendingOps,
  walletAccount,
  walletOfAccount,
  walletTxIds,
  walletTxRow,
  type LedgerTransfer,
  type TransferSpec,
  type WalletTxRow,
} from '../../lib/ledger/index.ts';
import { pageWalletTxs } from '../../lib/wallets/listing.ts';
import { storeAdapters } from '../helpers/store-adapters.ts';

const ASSET = 'ethereum:testnet:USDC';
const W = 'wal_0legacy';
const A = 'wal_0agent';

const adapters = storeAdapters('row_ids');

const spend = (id: string, amount: string, from = W, to = A): TransferSpec => ({
  id,
  kind: 'agent_spend',
  asset: ASSET,
  amount,
  debit_account: walletAccount(from, ASSET),
  credit_account: walletAccount(to, ASSET),
  spend_attempt_id: id,
  pending: true,
});

/**
 * The ops a release before format 3 wrote for `spec`: the same transfer without the history fields (and,
 * for format 1, without the marker), and a stored row per wallet side under that format's ids.
 */
async function olderOps(store: Store, spec: TransferSpec, at: Date, format: 1 | 2): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, at);
  await b.transfer(spec);
  const ops = b.ops();
  const out: WriteOp[] = [];
  for (const op of ops) {
    if (op.op === 'delete' || op.coll !== TRANSFERS) {
      out.push(op);
      continue;
    }
    const { wtx_format: _f, debit_wallet_id: _d, credit_wallet_id: _c, history_key: _h, ...rest } = op.doc as LedgerTransfer;
    const t: LedgerTransfer = format === 2 ? { ...rest, wtx_format: 2 } : rest;
    out.push({ ...op, doc: t });
    const ids = walletTxIds(t);
    for (const side of ['debit', 'credit'] as const) {
      const wallet = walletOfAccount(side === 'debit' ? t.debit_account : t.credit_account);
      if (wallet) out.push({ op: 'insert', coll: WALLET_TXS, doc: walletTxRow(t, side, ids[side], wallet) });
    }
  }
  return out;
}

/** every page of a wallet's history, `limit` rows at a time */
async function history(store: Store, wallet: string, limit: number): Promise<WalletTxRow[]> {
  const seen: WalletTxRow[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const page = await pageWalletTxs(store, wallet, { limit: String(limit), ...(cursor ? { cursor } : {}) }, (r) => r);
    seen.push(...page.data);
    if (!page.next_cursor) return seen;
    cursor = page.next_cursor;
  }
  throw new Error('the history did not end');
}

describe.each(adapters)('wallet history across formats: $name', (adapter) => {
  let store: Store;
  beforeEach(async () => {
    store = await adapter.open();
    await store.ensure(COLLECTIONS);
  });
  afterEach(async () => {
    await store.close();
    await adapter.cleanup();
  });

  const rowsOf = (transferId: string) => store.find<WalletTxRow>(WALLET_TXS, { transfer_id: transferId }, { sort: 'id' });
  const write = async (ops: WriteOp[] | Promise<WriteOp[]>) => store.write(await ops);
  const deposit = async (id: string, wallet: string, amount: string, at: Date) => {
    const b = new LedgerBatch(store, at);
    await b.transfer({
      id,
      kind: 'deposit',
      asset: ASSET,
      amount,
      debit_account: accountId('sys:chain', ASSET),
      credit_account: walletAccount(wallet, ASSET),
    });
    await write(b.ops());
  };

  it('pending transfers of formats 1 and 2 post and void onto their rows; format 3 writes none; history and check span all', async () => {
    const t0 = Date.now() - 60_000;
    await deposit('dep:1', W, '1000', new Date(t0));
    await write(olderOps(store, spend('sa_old_post', '100'), new Date(t0 + 1000), 1));
    await write(olderOps(store, spend('sa_old_void', '200'), new Date(t0 + 2000), 1));
    await write(olderOps(store, spend('sa_f2', '25'), new Date(t0 + 2500), 2));
    const oldRows = await rowsOf('sa_old_post');
    expect(oldRows).toHaveLength(2);
    expect(oldRows.every((r) => r.status === 'pending')).toBe(true);
    expect((await store.get<LedgerTransfer>(TRANSFERS, 'sa_old_post'))!.wtx_format).toBeUndefined();
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 675n });

    // this release: a new pending spend writes no row; the older ones finish onto their own rows
    const nb = new LedgerBatch(store, new Date(t0 + 3000));
    await nb.transfer(spend('sa_new', '50'));
    const ops = nb.ops();
    expect(ops.some((op) => op.coll === WALLET_TXS)).toBe(false);
    await write(ops);
    const fresh = (await store.get<LedgerTransfer>(TRANSFERS, 'sa_new'))!;
    expect(fresh).toMatchObject({ wtx_format: WTX_FORMAT, debit_wallet_id: W, credit_wallet_id: A });
    await write(postPendingOps(store, 'sa_old_post', {}, new Date(t0 + 4000)));
    await write(voidPendingOps(store, 'sa_old_void', new Date(t0 + 5000)));
    await write(postPendingOps(store, 'sa_f2', {}, new Date(t0 + 5500)));
    await write(postPendingOps(store, 'sa_new', {}, new Date(t0 + 6000)));

    const posted = await rowsOf('sa_old_post');
    expect(posted.map((r) => r.id)).toEqual(oldRows.map((r) => r.id));
    expect(posted.map((r) => r.status)).toEqual(['posted', 'posted']);
    expect((await rowsOf('sa_old_void')).map((r) => r.status)).toEqual(['voided', 'voided']);
    expect((await rowsOf('sa_f2')).map((r) => r.status)).toEqual(['posted', 'posted']);
    expect(await rowsOf('sa_new')).toEqual([]);
    expect(await store.count(WALLET_TXS, {})).toBe(6);
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 825n, pending: 0n });
    expect(await balance(store, A, ASSET)).toMatchObject({ available: 175n });
    const report = await checkStoredLedger(store);
    expect(report.problems).toEqual([]);
    expect(report.counts.wallet_transactions).toBe(9);

    // the history pages one row at a time, newest first, through rows of every format
    const mine = await history(store, W, 1);
    expect(mine.map((r) => [r.transfer_id, r.status])).toEqual([
      ['sa_new', 'posted'],
      ['sa_f2', 'posted'],
      ['sa_old_void', 'voided'],
      ['sa_old_post', 'posted'],
      ['dep:1', 'posted'],
    ]);
    const sa = walletTxIds(fresh);
    expect(mine[0]).toMatchObject({
      id: sa.debit,
      wallet_id: W,
      side: 'debit',
      type: 'agent_spend',
      amount: '50',
      spend_attempt_id: 'sa_new',
    });
    expect((await history(store, A, 2)).map((r) => [r.id, r.type])).toEqual([
      [sa.credit, 'transfer_in'],
      [walletTxIds((await store.get<LedgerTransfer>(TRANSFERS, 'sa_f2'))!).credit, 'transfer_in'],
      [(await rowsOf('sa_old_void')).find((r) => r.side === 'credit')!.id, 'transfer_in'],
      [posted.find((r) => r.side === 'credit')!.id, 'transfer_in'],
    ]);
  });

  it('any page size walks the history of transfers in one millisecond, both sides of one wallet included, in one order', async () => {
    const at = new Date(Date.now() - 1000);
    await deposit('dep:w', W, '1000000', at);
    await deposit('dep:a', A, '1000000', at);
    // many transfers share one created_at (a batch's): their order is their rows' ids
    const b = new LedgerBatch(store, at);
    for (let i = 0; i < 14; i++) await b.transfer({ ...spend(`sa_${i}`, String(i + 1), i % 3 ? W : A, i % 3 ? A : W), pending: false });
    // a transfer between a wallet's own accounts (its simulated and real money) is a row on each side of it
    await b.transfer({ ...spend('sa_self', '7'), credit_account: walletAccount(W, ASSET, true), pending: false });
    await write(b.ops());
    await write(olderOps(store, { ...spend('sa_f2', '3'), pending: false }, at, 2));
    await write(olderOps(store, { ...spend('sa_f1', '4'), pending: false }, at, 1));
    const all = await history(store, W, 100);
    expect(all).toHaveLength(19);
    expect(all.map((r) => r.sort_key)).toEqual(
      all
        .map((r) => r.sort_key)
        .sort()
        .reverse(),
    );
    expect(all.filter((r) => r.transfer_id === 'sa_self').map((r) => r.side)).toEqual(['credit', 'debit']);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), async (limit) => {
        expect((await history(store, W, limit)).map((r) => r.id)).toEqual(all.map((r) => r.id));
      }),
      { numRuns: 12 },
    );
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });
});
