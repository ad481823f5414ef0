/** The ledger against a real (in-memory SQLite) store: transfers, two-phase, idempotency, refusals, checks. */
import { SqliteStore } from '../../lib/store/sqlite.ts';
import { COLLECTIONS } from '../../lib/store/collections.ts';
import {
  ACCOUNTS,
  TRANSFERS,
  WALLET_TXS,
  LedgerBatch,
  LedgerError,
  TransferMismatchError,
  accountId,
  balance,
  balances,
  checkStoredLedger,
  commitWithRetry,
  isLedgerError,
  parseAccountId,
  payoutOps,
  postPendingOps,
  settlementOps,
  settlementPostOps,
  settlementReversalOps,
  transferOps,
  voidPendingOps,
  walletAccount,
  walletOfAccount,
  walletHistory,
  walletTxId,
  type LedgerAccount,
  type LedgerTransfer,
  type TransferSpec,
} from '../../lib/ledger/index.ts';

const ASSET = 'ethereum:testnet:USDC';
const W = 'wal_merchant1';
const A = 'wal_agent1';

describe('ledger', () => {
  let store: SqliteStore;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.ensure(COLLECTIONS);
  });
  afterEach(() => store.close());

  const commit = async (ops: Promise<unknown[]> | unknown[]) => {
    const o = (await ops) as never[];
    if (o.length) await store.write(o);
    return o.length;
  };
  const deposit = (key: string, amount: string, simulated = false) =>
    settlementOps(store, { depositKey: key, walletId: W, asset: ASSET, amount, sessionId: 'ps_1', simulated });
  /** a transfer's wallet transaction on one side, as the wallet's history shows it (the transfer is its own: format 3) */
  const rowOf = async (transferId: string, side: 'debit' | 'credit', wallet = W) => {
    const id = walletTxId((await store.get<LedgerTransfer>(TRANSFERS, transferId))!, side);
    return (await walletHistory(store, wallet, undefined, 100)).find((r) => r.id === id);
  };

  it('account ids name the owner and the asset', () => {
    expect(accountId('sys:chain', ASSET)).toBe('acc:sys:chain:ethereum:testnet:USDC');
    expect(parseAccountId('acc:sys:chain:ethereum:testnet:USDC')).toEqual({ owner: 'sys:chain', asset: ASSET });
    expect(parseAccountId(walletAccount(W, ASSET))).toEqual({ owner: W, asset: ASSET });
    expect(walletOfAccount(walletAccount(W, ASSET, true))).toBe(W);
    expect(walletOfAccount(accountId('sys:fees', ASSET))).toBeNull();
  });

  it('a posted transfer moves money between two accounts and creates them on first use', async () => {
    await commit(deposit('d1', '1500000', true));
    const b = await balance(store, W, ASSET);
    expect(b).toEqual({ available: 1500000n, pending: 0n, simulated_available: 1500000n });
    const sys = await store.get<LedgerAccount>(ACCOUNTS, accountId('sys:simulated', ASSET));
    expect(sys).toMatchObject({ debits_posted: '1500000', credits_posted: '0', flags: [] });
    const wal = await store.get<LedgerAccount>(ACCOUNTS, walletAccount(W, ASSET, true));
    expect(wal).toMatchObject({ credits_posted: '1500000', flags: ['no_negative'] });
  });

  it('the same transfer twice changes nothing; a different body under the same id is a 409', async () => {
    expect(await commit(deposit('d1', '100'))).toBeGreaterThan(0);
    expect(await deposit('d1', '100')).toEqual([]);
    await expect(deposit('d1', '101')).rejects.toBeInstanceOf(TransferMismatchError);
    await expect(deposit('d1', '101')).rejects.toMatchObject({ code: 409 });
    expect(await store.count(TRANSFERS, {})).toBe(1);
  });

  it('two-phase: pending is not available; post makes it available; void releases a reservation', async () => {
    await commit(deposit('d1', '1000'));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 0n, pending: 1000n });
    await commit(settlementPostOps(store, 'd1', { tx_hash: '0xsweep' }));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 1000n, pending: 0n });
    expect(await settlementPostOps(store, 'd1')).toEqual([]);
    expect(await store.get(TRANSFERS, 'set:d1')).toMatchObject({ status: 'posted', tx_hash: '0xsweep' });

    await commit(payoutOps(store, { payoutId: 'po_1', walletId: W, asset: ASSET, amount: '600' }));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 400n });
    await commit(voidPendingOps(store, 'po_1'));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 1000n });
    expect(await voidPendingOps(store, 'po_1')).toEqual([]);
    await expect(postPendingOps(store, 'po_1')).rejects.toMatchObject({ code: 'not_pending' });
    await expect(postPendingOps(store, 'po_nope')).rejects.toMatchObject({ code: 'unknown_transfer' });

    await commit(payoutOps(store, { payoutId: 'po_2', walletId: W, asset: ASSET, amount: '1000' }));
    await commit(postPendingOps(store, 'po_2', { tx_hash: '0xpay' }));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 0n });
    expect(await store.get<LedgerAccount>(ACCOUNTS, accountId('sys:payouts', ASSET))).toMatchObject({
      credits_posted: '1000',
      credits_pending: '0',
    });
  });

  it('refuses to overdraw a wallet, counting reservations; simulated and on-chain money stay apart', async () => {
    await commit(deposit('d1', '500', true));
    const err = await payoutOps(store, { payoutId: 'po_1', walletId: W, asset: ASSET, amount: '501', simulated: true }).catch((e) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect(isLedgerError(err, 'insufficient_funds')).toBe(true);
    expect(err.message).toBe('insufficient available balance');
    // simulated money does not fund an on-chain payout
    await expect(payoutOps(store, { payoutId: 'po_2', walletId: W, asset: ASSET, amount: '1' })).rejects.toMatchObject({
      code: 'insufficient_funds',
    });
    await commit(payoutOps(store, { payoutId: 'po_3', walletId: W, asset: ASSET, amount: '300', simulated: true }));
    await expect(payoutOps(store, { payoutId: 'po_4', walletId: W, asset: ASSET, amount: '201', simulated: true })).rejects.toMatchObject({
      code: 'insufficient_funds',
    });
    expect((await balance(store, W, ASSET)).available).toBe(200n);
  });

  it('an internal transfer credits the other wallet at once and shows on both sides', async () => {
    await commit(deposit('d1', '900', true));
    await commit(payoutOps(store, { payoutId: 'po_1', walletId: W, asset: ASSET, amount: '250', simulated: true, toWalletId: A }));
    expect((await balance(store, A, ASSET)).available).toBe(250n);
    const out = await rowOf('po_1', 'debit');
    const inn = await rowOf('po_1', 'credit', A);
    expect(await store.count(WALLET_TXS, {})).toBe(0);
    expect(out).toMatchObject({ wallet_id: W, type: 'transfer_out', status: 'posted', payout_id: 'po_1', amount: '250' });
    expect(inn).toMatchObject({ wallet_id: A, type: 'transfer_in', status: 'posted', payout_id: 'po_1' });
  });

  it('a reorg voids a pending settlement and reverses a posted one, never below zero', async () => {
    await commit(deposit('d1', '1000'));
    await commit(settlementReversalOps(store, 'd1'));
    expect(await store.get(TRANSFERS, 'set:d1')).toMatchObject({ status: 'voided' });
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 0n, pending: 0n });

    await commit(deposit('d2', '1000'));
    await commit(settlementPostOps(store, 'd2'));
    await commit(payoutOps(store, { payoutId: 'po_1', walletId: W, asset: ASSET, amount: '700' }));
    await commit(settlementReversalOps(store, 'd2'));
    expect(await settlementReversalOps(store, 'd2')).toEqual([]);
    expect(await store.get(TRANSFERS, 'rev:d2')).toMatchObject({ kind: 'settlement_reversal', amount: '300', status: 'posted' });
    expect(await store.get(TRANSFERS, 'loss:d2')).toMatchObject({ kind: 'loss', amount: '700' });
    expect((await balance(store, W, ASSET)).available).toBe(0n);
    const rev = await rowOf('rev:d2', 'debit');
    expect(rev).toMatchObject({ type: 'settlement_reversal', amount: '300', session_id: 'ps_1' });
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });

  it('a deposit credited again after its revert settles again as a new generation', async () => {
    await commit(deposit('d1', '1000'));
    await commit(settlementReversalOps(store, 'd1'));
    expect(await deposit('d1', '1000')).not.toEqual([]);
    await commit(deposit('d1', '1000'));
    expect(await deposit('d1', '1000')).toEqual([]);
    expect(await store.get(TRANSFERS, 'set:d1#2')).toMatchObject({ status: 'pending', amount: '1000' });
    await commit(settlementPostOps(store, 'd1'));
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 1000n, pending: 0n });
    await commit(settlementReversalOps(store, 'd1'));
    expect(await store.get(TRANSFERS, 'rev:d1#2')).toMatchObject({ amount: '1000' });
    expect(await balance(store, W, ASSET)).toMatchObject({ available: 0n, pending: 0n });
    await expect(settlementPostOps(store, 'nope')).rejects.toMatchObject({ code: 'unknown_transfer' });
    expect((await checkStoredLedger(store)).problems).toEqual([]);
  });

  it('several transfers on one account in one batch are one compare-and-set', async () => {
    const b = new LedgerBatch(store);
    for (let i = 0; i < 3; i++) {
      await b.transfer({
        id: `t${i}`,
        kind: 'deposit',
        asset: ASSET,
        amount: '10',
        debit_account: accountId('sys:chain', ASSET),
        credit_account: walletAccount(W, ASSET),
      });
    }
    await b.transfer({
      id: 'p1',
      kind: 'payout',
      asset: ASSET,
      amount: '25',
      pending: true,
      debit_account: walletAccount(W, ASSET),
      credit_account: accountId('sys:payouts', ASSET),
    });
    await b.post('p1');
    const ops = b.ops();
    expect(ops.filter((o) => o.coll === ACCOUNTS)).toHaveLength(3);
    await store.write(ops);
    expect((await balances(store, W))[ASSET].available).toBe(5n);
    expect((await checkStoredLedger(store)).ok).toBe(true);
  });

  it('rejects malformed transfers', async () => {
    const base: TransferSpec = {
      id: 'x',
      kind: 'deposit',
      asset: ASSET,
      amount: '1',
      debit_account: accountId('sys:chain', ASSET),
      credit_account: walletAccount(W, ASSET),
    };
    for (const bad of [
      { amount: '0' },
      { amount: '-1' },
      { amount: '1.5' },
      { amount: '01' },
      { credit_account: walletAccount(W, 'solana:testnet:USDC') },
      { credit_account: base.debit_account },
      { kind: 'gift' },
    ]) {
      await expect(transferOps(store, { ...base, ...bad } as TransferSpec)).rejects.toMatchObject({ code: 'invalid_transfer' });
    }
  });

  it('concurrent payouts on one wallet never overdraw it (compare-and-set and retry)', async () => {
    await commit(deposit('d1', '1000', true));
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        commitWithRetry(store, () => payoutOps(store, { payoutId: `po_${i}`, walletId: W, asset: ASSET, amount: '150', simulated: true })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(6);
    expect(
      results.filter((r) => r.status === 'rejected').every((r) => isLedgerError((r as PromiseRejectedResult).reason, 'insufficient_funds')),
    ).toBe(true);
    expect((await balance(store, W, ASSET)).available).toBe(100n);
    expect((await checkStoredLedger(store)).ok).toBe(true);
  });

  it('the check finds a planted fault', async () => {
    await commit(deposit('d1', '1000', true));
    const acc = (await store.get<LedgerAccount>(ACCOUNTS, walletAccount(W, ASSET, true)))!;
    await store.write([{ op: 'cas', coll: ACCOUNTS, doc: { ...acc, credits_posted: '1001' }, expected: acc.version }]);
    const t = (await store.get<LedgerTransfer>(TRANSFERS, 'set:d1'))!;
    const { credit_wallet_id: _gone, ...unnamed } = t;
    await store.write([{ op: 'cas', coll: TRANSFERS, doc: unnamed, expected: t.version }]);
    const report = await checkStoredLedger(store);
    expect(report.ok).toBe(false);
    expect(report.problems.join('\n')).toMatch(/sum to 1/);
    expect(report.problems.join('\n')).toMatch(/totals differ/);
    expect(report.problems.join('\n')).toMatch(/wallet history fields do not match/);
  });
});
