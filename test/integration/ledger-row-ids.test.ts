/**
 * Wallet-transaction row ids across the change of their format (lib/ledger/wallet-tx-ids.ts), on every
 * adapter (SQLite and PostgreSQL; MongoDB where MONGO_URL is set): a transfer written before format 2
 * (sha256 row ids, no marker) that is still pending posts or voids onto its original rows; the wallet
 * history pages through old and new rows in time order; the ledger check holds over both.
 */
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
  walletTxId,
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

const spend = (id: string, amount: string): TransferSpec => ({
  id,
  kind: 'agent_spend',
  asset: ASSET,
  amount,
  debit_account: walletAccount(W, ASSET),
  credit_account: walletAccount(A, ASSET),
  spend_attempt_id: id,
  pending: true,
});

/**
 * The ops the release before format 2 wrote for `spec`: the same documents, the transfer without the
 * marker, its wallet rows under sha256 ids (and sort keys of them).
 */
async function legacyOps(store: Store, spec: TransferSpec, at: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, at);
  await b.transfer(spec);
  return b.ops().map((op) => {
    if (op.op === 'delete') return op;
    if (op.coll === TRANSFERS) {
      const { wtx_format: _f, ...doc } = op.doc as LedgerTransfer;
      return { ...op, doc };
    }
    if (op.coll !== WALLET_TXS) return op;
    const row = op.doc as WalletTxRow;
    const id = walletTxId({ id: row.transfer_id, created_at: row.created_at }, row.side);
    return { ...op, doc: { ...row, id, sort_key: `${row.created_at}|${id}` } };
  });
}

describe.each(adapters)('ledger row ids across formats: $name', (adapter) => {
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

  it('a pending transfer of the old format posts and voids onto its original rows; history and check span both formats', async () => {
    const t0 = Date.now() - 60_000;
    const b = new LedgerBatch(store, new Date(t0));
    await b.transfer({
      id: 'dep:1',
      kind: 'deposit',
      asset: ASSET,
      amount: '1000',
      debit_account: accountId('sys:chain', ASSET),
      credit_account: walletAccount(W, ASSET),
    });
    await write(b.ops());
    await write(legacyOps(store, spend('sa_old_post', '100'), new Date(t0 + 1000)));
    await write(legacyOps(store, spend('sa_old_void', '200'), new Date(t0 + 2000)));
    const oldRows = await rowsOf('sa_old_post');
    expect(oldRows).toHaveLength(2);
    expect(oldRows.every((r) => r.status === 'pending')).toBe(true);
    expect((await store.get<LedgerTransfer>(TRANSFERS, 'sa_old_post'))!.wtx_format).toBeUndefined();
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 700n });

    // the new release: a new pending spend gets format-2 rows; the old ones finish onto their own rows
    const nb = new LedgerBatch(store, new Date(t0 + 3000));
    await nb.transfer(spend('sa_new', '50'));
    await write(nb.ops());
    expect((await store.get<LedgerTransfer>(TRANSFERS, 'sa_new'))!.wtx_format).toBe(WTX_FORMAT);
    await write(postPendingOps(store, 'sa_old_post', {}, new Date(t0 + 4000)));
    await write(voidPendingOps(store, 'sa_old_void', new Date(t0 + 5000)));
    await write(postPendingOps(store, 'sa_new', {}, new Date(t0 + 6000)));

    const posted = await rowsOf('sa_old_post');
    expect(posted.map((r) => r.id)).toEqual(oldRows.map((r) => r.id));
    expect(posted.map((r) => r.status)).toEqual(['posted', 'posted']);
    expect((await rowsOf('sa_old_void')).map((r) => r.status)).toEqual(['voided', 'voided']);
    const newer = await rowsOf('sa_new');
    expect(newer.map((r) => r.status)).toEqual(['posted', 'posted']);
    const newTransfer = (await store.get<LedgerTransfer>(TRANSFERS, 'sa_new'))!;
    expect(newer.map((r) => r.id).sort()).toEqual([walletTxId(newTransfer, 'debit'), walletTxId(newTransfer, 'credit')].sort());
    expect(await store.count(WALLET_TXS, {})).toBe(7);
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 850n, pending: 0n });
    expect(await balance(store, A, ASSET)).toMatchObject({ available: 150n });
    const report = await checkStoredLedger(store);
    expect(report.problems).toEqual([]);

    // the history pages one row at a time, newest first, through rows of both formats
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await pageWalletTxs(store, W, { limit: '1', ...(cursor ? { cursor } : {}) }, (r) => r);
      seen.push(...page.data.map((r) => r.transfer_id));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(['sa_new', 'sa_old_void', 'sa_old_post', 'dep:1']);
  });
});
