/**
 * The service's money movements as ledger transfers. Each adds to a LedgerBatch (or returns ops) that the
 * caller commits in the same write as the state change causing it. Transfer ids are the idempotency keys:
 * `set:<deposit key>` for a settlement, `rev:<deposit key>` / `loss:<deposit key>` for its reversal,
 * the payout id for a payout.
 */
import type { Store, WriteOp } from '../store/port.ts';
import { accountId, available, walletAccount } from './accounts.ts';
import { LedgerBatch, LedgerError, type LedgerTransfer, type TransferRefs } from './transfers.ts';

/**
 * A deposit key can be credited again after a revert (its transaction reorged out and mined again):
 * each credit is a new generation with its own transfer ids (`<key>`, then `<key>#2`, …), since
 * transfers are never rewritten.
 */
export const settlementKey = (depositKey: string, generation = 1) => (generation === 1 ? depositKey : `${depositKey}#${generation}`);
export const settlementId = (key: string) => `set:${key}`;
export const reversalId = (key: string) => `rev:${key}`;
export const lossId = (key: string) => `loss:${key}`;

const MAX_GENERATIONS = 1000;

/** The deposit key a settlement transfer id (`set:<key>` or `set:<key>#<generation>`) belongs to. */
export const depositKeyOf = (settlementTransferId: string) => settlementTransferId.replace(/^set:/, '').replace(/#\d+$/, '');

/** The newest generation's settlement of a deposit key (null when it was never settled) and its key. */
export async function latestSettlement(
  b: LedgerBatch,
  depositKey: string,
): Promise<{ key: string; transfer: LedgerTransfer; reversed: boolean } | null> {
  let found: { key: string; transfer: LedgerTransfer; reversed: boolean } | null = null;
  for (let g = 1; g <= MAX_GENERATIONS; g++) {
    const key = settlementKey(depositKey, g);
    const transfer = await b.transferDoc(settlementId(key));
    if (!transfer) return found;
    const reversed = transfer.status === 'voided' || !!(await b.transferDoc(reversalId(key))) || !!(await b.transferDoc(lossId(key)));
    found = { key, transfer, reversed };
  }
  throw new LedgerError('invalid_transfer', `deposit ${depositKey} was settled more than ${MAX_GENERATIONS} times`);
}

export interface SettlementSpec {
  depositKey: string;
  walletId: string;
  asset: string;
  amount: bigint | string;
  sessionId?: string;
  txHash?: string;
  /** sandbox money with no chain behind it: available at once, in the wallet's simulated sub-account */
  simulated?: boolean;
}

/**
 * Credits a counted deposit to the merchant's wallet, once per deposit key (and generation). On-chain
 * money is pending (it still sits at the deposit address) until the sweep posts it (`settlementPostOps`);
 * simulated money is posted at once. False when the deposit's current credit is already settled.
 */
export async function addSettlement(b: LedgerBatch, s: SettlementSpec): Promise<boolean> {
  const latest = await latestSettlement(b, s.depositKey);
  const generation = latest ? (latest.reversed ? generationOf(latest.key) + 1 : generationOf(latest.key)) : 1;
  const refs: TransferRefs = {};
  if (s.sessionId) refs.session_id = s.sessionId;
  if (s.txHash) refs.tx_hash = s.txHash;
  if (s.simulated) refs.simulated = true;
  return b.transfer({
    id: settlementId(settlementKey(s.depositKey, generation)),
    kind: 'settlement',
    asset: s.asset,
    amount: s.amount,
    pending: !s.simulated,
    debit_account: accountId(s.simulated ? 'sys:simulated' : 'sys:chain', s.asset),
    credit_account: walletAccount(s.walletId, s.asset, !!s.simulated),
    ...refs,
  });
}

const generationOf = (key: string) => {
  const m = /#(\d+)$/.exec(key);
  return m ? Number(m[1]) : 1;
};

export async function settlementOps(store: Store, s: SettlementSpec, now?: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await addSettlement(b, s);
  return b.ops();
}

/**
 * Posts a deposit's pending settlement once its sweep is confirmed (the money is in the wallet's address).
 * `[]` when it is already posted; LedgerError `unknown_transfer` when the deposit was never settled and
 * `not_pending` when its settlement was voided (a reorg took it back: nothing to sweep for it).
 */
export async function addSettlementPost(b: LedgerBatch, depositKey: string, refs?: Pick<TransferRefs, 'tx_hash'>): Promise<boolean> {
  const latest = await latestSettlement(b, depositKey);
  if (!latest) throw new LedgerError('unknown_transfer', `deposit ${depositKey} has no settlement`);
  return b.post(latest.transfer.id, refs);
}

export async function settlementPostOps(
  store: Store,
  depositKey: string,
  refs?: Pick<TransferRefs, 'tx_hash'>,
  now?: Date,
): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await addSettlementPost(b, depositKey, refs);
  return b.ops();
}

/**
 * Takes a reorged deposit's credit back. A settlement still pending is voided (the money never became
 * available). A posted one is reversed by a new transfer of what the wallet still holds; whatever the
 * wallet already spent is booked to `sys:losses` (a reversal never drives a wallet below zero).
 * Does nothing for a deposit that was never settled or is already reversed.
 */
export async function addSettlementReversal(b: LedgerBatch, depositKey: string): Promise<boolean> {
  const latest = await latestSettlement(b, depositKey);
  if (!latest || latest.reversed) return false;
  const { key, transfer: t } = latest;
  if (t.status === 'pending') return b.void(t.id);
  const amount = BigInt(t.amount);
  const wallet = await b.account(t.credit_account);
  const have = available(wallet);
  const back = have < amount ? (have > 0n ? have : 0n) : amount;
  const refs: TransferRefs = {};
  if (t.session_id) refs.session_id = t.session_id;
  if (t.tx_hash) refs.tx_hash = t.tx_hash;
  if (t.simulated) refs.simulated = true;
  if (back > 0n) {
    await b.transfer({
      id: reversalId(key),
      kind: 'settlement_reversal',
      asset: t.asset,
      amount: back,
      debit_account: t.credit_account,
      credit_account: t.debit_account,
      ...refs,
    });
  }
  if (amount > back) {
    await b.transfer({
      id: lossId(key),
      kind: 'loss',
      asset: t.asset,
      amount: amount - back,
      debit_account: accountId('sys:losses', t.asset),
      credit_account: t.debit_account,
      ...refs,
    });
  }
  return true;
}

export async function settlementReversalOps(store: Store, depositKey: string, now?: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await addSettlementReversal(b, depositKey);
  return b.ops();
}

export interface PayoutTransferSpec {
  payoutId: string;
  walletId: string;
  asset: string;
  amount: bigint | string;
  /** a payout of simulated sandbox money: posted at once, never broadcast */
  simulated?: boolean;
  /** a destination that is one of this service's wallets: settles inside the ledger at once */
  toWalletId?: string;
}

/**
 * The ledger side of accepting a payout (transfer id = payout id):
 * - to one of our wallets: a posted `transfer` into that wallet (same sub-account kind: simulated money
 *   stays simulated);
 * - simulated: a posted `payout` to `sys:simulated`;
 * - on chain: a pending `payout` to `sys:payouts` that reserves the amount; the executor posts it when the
 *   transaction is confirmed and voids it when it cannot land (`postPendingOps` / `voidPendingOps`).
 * Throws LedgerError `insufficient_funds` when the source sub-account cannot cover it.
 */
export async function addPayout(b: LedgerBatch, p: PayoutTransferSpec): Promise<boolean> {
  const sim = !!p.simulated;
  const from = walletAccount(p.walletId, p.asset, sim);
  const refs: TransferRefs = { payout_id: p.payoutId };
  if (sim) refs.simulated = true;
  if (p.toWalletId) {
    if (p.toWalletId === p.walletId) throw new LedgerError('invalid_transfer', 'a payout cannot go to its own wallet');
    return b.transfer({
      id: p.payoutId,
      kind: 'transfer',
      asset: p.asset,
      amount: p.amount,
      debit_account: from,
      credit_account: walletAccount(p.toWalletId, p.asset, sim),
      ...refs,
    });
  }
  return b.transfer({
    id: p.payoutId,
    kind: 'payout',
    asset: p.asset,
    amount: p.amount,
    pending: !sim,
    debit_account: from,
    credit_account: accountId(sim ? 'sys:simulated' : 'sys:payouts', p.asset),
    ...refs,
  });
}

export async function payoutOps(store: Store, p: PayoutTransferSpec, now?: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await addPayout(b, p);
  return b.ops();
}
