/**
 * Transfers: one balanced movement of `amount` of one asset from a debit account to a credit account,
 * committed with both account updates (compare-and-set on their versions) in the caller's own
 * `store.write`, next to the state change that causes it. A transfer id is its idempotency key: the same
 * id with the same body is already done (no ops); with a different body it is a 409. Two-phase transfers
 * start `pending` (reserving the debit) and end `posted` or `voided`; transfers are never deleted.
 */
import { ServiceError } from '../core/errors.ts';
import type { Doc, Store, WriteOp } from '../store/port.ts';
import {
  ACCOUNTS,
  TRANSFERS,
  WALLET_TXS,
  available,
  isWalletOwner,
  newAccount,
  parseAccountId,
  walletOfAccount,
  type LedgerAccount,
} from './accounts.ts';
import { WTX_FORMAT, carriesHistory, historyKey, walletTxIds, type Side } from './wallet-tx-ids.ts';

export const TRANSFER_KINDS = [
  'settlement',
  'settlement_reversal',
  'payout',
  'payout_reversal',
  'transfer',
  'agent_spend',
  'fee',
  'deposit',
  'loss',
  'refund',
] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];
export type TransferStatus = 'pending' | 'posted' | 'voided';

export const WALLET_TX_TYPES = [
  'settlement',
  'settlement_reversal',
  'payout',
  'payout_reversal',
  'transfer_in',
  'transfer_out',
  'agent_spend',
  'fee',
  'deposit',
  'refund',
] as const;
export type WalletTxType = (typeof WALLET_TX_TYPES)[number];

/** What a transfer looks like from a wallet on each side of it. */
const SIDE_TYPES: Record<TransferKind, { debit: WalletTxType; credit: WalletTxType }> = {
  settlement: { debit: 'settlement_reversal', credit: 'settlement' },
  settlement_reversal: { debit: 'settlement_reversal', credit: 'settlement' },
  payout: { debit: 'payout', credit: 'transfer_in' },
  payout_reversal: { debit: 'payout', credit: 'payout_reversal' },
  transfer: { debit: 'transfer_out', credit: 'transfer_in' },
  agent_spend: { debit: 'agent_spend', credit: 'transfer_in' },
  fee: { debit: 'fee', credit: 'fee' },
  deposit: { debit: 'transfer_out', credit: 'deposit' },
  loss: { debit: 'settlement_reversal', credit: 'settlement' },
  refund: { debit: 'refund', credit: 'transfer_in' },
};
export const walletTxType = (kind: TransferKind, side: 'debit' | 'credit'): WalletTxType => SIDE_TYPES[kind][side];

/** References a wallet transaction shows; stored on the transfer and copied to its wallet transactions. */
export interface TransferRefs {
  session_id?: string;
  payout_id?: string;
  /** a refund of a payment session (its session_id is set too) */
  refund_id?: string;
  spend_attempt_id?: string;
  tx_hash?: string;
  /** sandbox money with no chain behind it */
  simulated?: boolean;
}
/**
 * Copies the references that are set (an absent one stays absent). One named store each: a loop over the
 * names with a computed key was a megamorphic keyed store per field, ~2 % of a spend's CPU with the rows.
 */
function copyRefs(from: TransferRefs, to: TransferRefs): void {
  if (from.session_id !== undefined) to.session_id = from.session_id;
  if (from.payout_id !== undefined) to.payout_id = from.payout_id;
  if (from.refund_id !== undefined) to.refund_id = from.refund_id;
  if (from.spend_attempt_id !== undefined) to.spend_attempt_id = from.spend_attempt_id;
  if (from.tx_hash !== undefined) to.tx_hash = from.tx_hash;
  if (from.simulated !== undefined) to.simulated = from.simulated;
}

export interface TransferSpec extends TransferRefs {
  /** the idempotency key: the deposit key, the payout id, the spend-attempt id, … */
  id: string;
  debit_account: string;
  credit_account: string;
  asset: string;
  amount: bigint | string;
  kind: TransferKind;
  /** two-phase: reserve now, post or void later */
  pending?: boolean;
  /**
   * The id was minted for this transfer in this request (a new spend attempt's): no stored transfer can
   * hold it, so the idempotency read is skipped (were one there, the insert would fail as a duplicate).
   */
  fresh?: boolean;
}

export interface LedgerTransfer extends Doc, TransferRefs {
  id: string;
  debit_account: string;
  credit_account: string;
  asset: string;
  amount: string;
  kind: TransferKind;
  two_phase: boolean;
  status: TransferStatus;
  created_at: string;
  posted_at?: string;
  voided_at?: string;
  /** the id format of its wallet transactions (wallet-tx-ids.ts); absent on transfers written before format 2 */
  wtx_format?: number;
  /** format 3 on: the wallet whose account each side is (absent on a system account's side), indexed for its history */
  debit_wallet_id?: string;
  credit_wallet_id?: string;
  /**
   * format 3 on, where a side is a wallet's: `<created_at>|<its wallet transactions' id less the side digit>`,
   * the wallet history's order (a row's sort key is it and the side digit)
   */
  history_key?: string;
  version: number;
}

export interface WalletTxRow extends Doc, TransferRefs {
  id: string;
  wallet_id: string;
  transfer_id: string;
  side: 'debit' | 'credit';
  direction: 'in' | 'out';
  type: WalletTxType;
  asset: string;
  amount: string;
  status: TransferStatus;
  created_at: string;
  posted_at?: string;
  /** `<created_at>|<id>`: one field to page on, newest first */
  sort_key: string;
}

/**
 * The wallet transaction a transfer shows the wallet on one side of it: stored as a row for a transfer
 * before format 3, derived from the transfer itself after (./wallet-history.ts).
 */
export function walletTxRow(t: LedgerTransfer, side: Side, id: string, wallet: string): WalletTxRow {
  const row: WalletTxRow = {
    id,
    wallet_id: wallet,
    transfer_id: t.id,
    side,
    direction: side === 'debit' ? 'out' : 'in',
    type: walletTxType(t.kind, side),
    asset: t.asset,
    amount: t.amount,
    status: t.status,
    created_at: t.created_at,
    sort_key: `${t.created_at}|${id}`,
  };
  if (t.posted_at) row.posted_at = t.posted_at;
  copyRefs(t, row);
  return row;
}

export type LedgerErrorCode = 'insufficient_funds' | 'not_pending' | 'unknown_transfer' | 'invalid_transfer';

/** A refusal by the ledger's rules. Facades turn it into a 4xx (see `ledgerErrorToService`). */
export class LedgerError extends Error {
  readonly code: LedgerErrorCode;
  readonly status = 409;
  readonly account?: string;
  constructor(code: LedgerErrorCode, message: string, account?: string) {
    super(message);
    this.name = 'LedgerError';
    this.code = code;
    this.account = account;
  }
}
export const isLedgerError = (e: unknown, code?: LedgerErrorCode): e is LedgerError =>
  e instanceof LedgerError && (!code || e.code === code);

/** Same transfer id, different body: a 409 in the envelope (code 5). */
export class TransferMismatchError extends ServiceError {
  constructor(id: string) {
    super(409, `transfer ${id} already exists with a different body`, 'LEDGER_TRANSFER_MISMATCH');
  }
}

const DIGITS = /^(0|[1-9]\d*)$/;
const KINDS: ReadonlySet<string> = new Set(TRANSFER_KINDS);

function validate(spec: TransferSpec): bigint {
  const amount = typeof spec.amount === 'bigint' ? spec.amount : DIGITS.test(spec.amount) ? BigInt(spec.amount) : -1n;
  if (amount <= 0n) throw new LedgerError('invalid_transfer', `transfer ${spec.id}: amount must be a positive integer`);
  if (!spec.id) throw new LedgerError('invalid_transfer', 'transfer id is required');
  if (spec.debit_account === spec.credit_account)
    throw new LedgerError('invalid_transfer', `transfer ${spec.id}: debit and credit accounts are the same`);
  for (const acc of [spec.debit_account, spec.credit_account]) {
    if (!acc.startsWith('acc:') || parseAccountId(acc).asset !== spec.asset) {
      throw new LedgerError('invalid_transfer', `transfer ${spec.id}: account ${acc} is not in asset ${spec.asset}`);
    }
  }
  if (!KINDS.has(spec.kind)) throw new LedgerError('invalid_transfer', `transfer ${spec.id}: unknown kind ${spec.kind}`);
  return amount;
}

const sameBody = (t: LedgerTransfer, spec: TransferSpec, amount: bigint) =>
  t.debit_account === spec.debit_account &&
  t.credit_account === spec.credit_account &&
  t.asset === spec.asset &&
  t.amount === amount.toString() &&
  t.kind === spec.kind &&
  t.two_phase === !!spec.pending;

/** the last time formatted: batches in one ms (many, under load) share its text instead of formatting it again */
let lastIso = { ms: NaN, iso: '' };
function isoOf(ms: number, d: Date): string {
  if (ms !== lastIso.ms) lastIso = { ms, iso: d.toISOString() };
  return lastIso.iso;
}

const add = (a: string, b: bigint) => (BigInt(a) + b).toString();

interface Loaded<T> {
  doc: T;
  loaded: number | null;
  dirty: boolean;
}

const SIDES = ['debit', 'credit'] as const;
const BALANCES = ['debits_posted', 'debits_pending', 'credits_posted', 'credits_pending'] as const;
type Balance = (typeof BALANCES)[number];

/** An account in a batch: what this batch changes, and what was read of it (only when something needed it). */
interface AccountEntry {
  /** parsed from the id once per batch */
  owner: string;
  asset: string;
  /** the wallet it belongs to (either sub-account), or null for a system account */
  wallet: string | null;
  /** its default flags hold no_negative (a wallet's account): a debit reads it for the check */
  walletOwned: boolean;
  /** as stored when read (null: absent); undefined: not read, since no change so far needed it */
  read?: LedgerAccount | null;
  delta: Record<Balance, bigint>;
  dirty: boolean;
  /** the caller read it (`account()`) and may have decided on its balance */
  seen: boolean;
}

/** what a read account holds available as its batch leaves it so far: what view() would hold, without building it */
const availableIn = (e: AccountEntry): bigint =>
  (e.read ? available(e.read) : 0n) + e.delta.credits_posted - e.delta.debits_posted - e.delta.debits_pending;

/**
 * Several ledger changes that commit together. Accounts are read once and their changes merged, so two
 * transfers on one account in one write are one write of it. `ops()` is what the caller commits.
 *
 * An account change that no check depends on is written as an `add` of its amounts (WriteOp `add`), not
 * as a compare-and-set of the whole account: adds commute, so many writers moving money through one busy
 * account (the merchant wallet every settlement and agent spend credits, `sys:simulated` every sandbox
 * payment debits) never conflict on it. A change needs a compare-and-set when it lowers a wallet's
 * available balance (the `no_negative` check read it) or when the caller read the account through
 * `account()` and may have decided on what it holds.
 */
export class LedgerBatch {
  private accounts = new Map<string, AccountEntry>();
  private transfers = new Map<string, Loaded<LedgerTransfer>>();
  /** the stored rows of transfers before format 3 that this batch posts or voids */
  private txRows = new Map<string, WalletTxRow>();
  private readonly now: string;
  /** `now` in ms: the ordered wallet-transaction ids of this batch's transfers start with it */
  private readonly nowMs: number;
  private readonly store: Store;

  constructor(store: Store, now: Date = new Date()) {
    this.store = store;
    this.nowMs = now.getTime();
    this.now = isoOf(this.nowMs, now);
  }

  /**
   * The account as this batch will leave it so far (a fresh zero account when it does not exist yet): a
   * copy. The caller may decide on what it reads, so the batch writes this account back as a compare-and-set.
   */
  async account(id: string): Promise<LedgerAccount> {
    const e = await this.read(id);
    e.seen = true;
    return this.view(id, e);
  }

  /**
   * What the account holds available as this batch will leave it so far (`available` of `account()`,
   * without building the account): the caller decides on it, so the batch writes it back as a compare-and-set.
   */
  async available(id: string): Promise<bigint> {
    const e = await this.read(id);
    e.seen = true;
    return availableIn(e);
  }

  private entry(id: string): AccountEntry {
    let e = this.accounts.get(id);
    if (!e) {
      const { owner, asset } = parseAccountId(id);
      e = {
        owner,
        asset,
        wallet: walletOfAccount(id),
        walletOwned: isWalletOwner(owner),
        delta: { debits_posted: 0n, debits_pending: 0n, credits_posted: 0n, credits_pending: 0n },
        dirty: false,
        seen: false,
      };
      this.accounts.set(id, e);
    }
    return e;
  }

  private async read(id: string): Promise<AccountEntry> {
    const e = this.entry(id);
    if (e.read === undefined) e.read = (await this.store.get<LedgerAccount>(ACCOUNTS, id)) ?? null;
    return e;
  }

  private view(id: string, e: AccountEntry): LedgerAccount {
    const a: LedgerAccount = e.read ? { ...e.read, flags: [...e.read.flags] } : newAccount(e.owner, e.asset, this.now);
    for (const f of BALANCES) a[f] = add(a[f], e.delta[f]);
    if (e.dirty) a.updated_at = this.now;
    return a;
  }

  private change(id: string, field: Balance, amount: bigint) {
    const e = this.entry(id);
    e.delta[field] += amount;
    e.dirty = true;
  }

  async transferDoc(id: string): Promise<LedgerTransfer | null> {
    let t = this.transfers.get(id);
    if (!t) {
      const stored = await this.store.get<LedgerTransfer>(TRANSFERS, id);
      if (!stored) return null;
      t = { doc: { ...stored }, loaded: stored.version, dirty: false };
      this.transfers.set(id, t);
    }
    return t.doc;
  }

  /** Adds a transfer; false when this exact transfer already exists (nothing to do). */
  async transfer(spec: TransferSpec): Promise<boolean> {
    const amount = validate(spec);
    // the batch's own transfers first; then, unless the id is fresh, the store (transferDoc, inline: one await less)
    let existing = this.transfers.get(spec.id)?.doc ?? null;
    if (!existing && !spec.fresh) {
      const stored = await this.store.get<LedgerTransfer>(TRANSFERS, spec.id);
      if (stored) {
        const t = { doc: { ...stored }, loaded: stored.version, dirty: false };
        this.transfers.set(spec.id, t);
        existing = t.doc;
      }
    }
    if (existing) {
      if (!sameBody(existing, spec, amount)) throw new TransferMismatchError(spec.id);
      return false;
    }
    // only an account that may not go negative is read, for its balance check; a credit needs no read
    const e = this.entry(spec.debit_account);
    if (e.walletOwned) {
      // read() inline: one await less
      if (e.read === undefined) e.read = (await this.store.get<LedgerAccount>(ACCOUNTS, spec.debit_account)) ?? null;
      if ((e.read ? e.read.flags.includes('no_negative') : e.walletOwned) && availableIn(e) < amount) {
        throw new LedgerError('insufficient_funds', 'insufficient available balance', spec.debit_account);
      }
    }
    this.change(spec.debit_account, spec.pending ? 'debits_pending' : 'debits_posted', amount);
    this.change(spec.credit_account, spec.pending ? 'credits_pending' : 'credits_posted', amount);
    const doc: LedgerTransfer = {
      id: spec.id,
      debit_account: spec.debit_account,
      credit_account: spec.credit_account,
      asset: spec.asset,
      amount: amount.toString(),
      kind: spec.kind,
      two_phase: !!spec.pending,
      status: spec.pending ? 'pending' : 'posted',
      created_at: this.now,
      wtx_format: WTX_FORMAT,
      version: 1,
    };
    // its wallets' history is the transfer itself: no row per wallet side to write (./wallet-history.ts)
    const debitWallet = e.wallet;
    const creditWallet = this.entry(spec.credit_account).wallet;
    if (debitWallet) doc.debit_wallet_id = debitWallet;
    if (creditWallet) doc.credit_wallet_id = creditWallet;
    if (debitWallet || creditWallet) doc.history_key = historyKey(doc, this.nowMs);
    copyRefs(spec, doc);
    if (!spec.pending) doc.posted_at = this.now;
    this.transfers.set(doc.id, { doc, loaded: null, dirty: true });
    return true;
  }

  /** Posts a pending transfer (the reserved money moves for good); false when it is already posted. */
  async post(id: string, refs: Pick<TransferRefs, 'tx_hash'> = {}): Promise<boolean> {
    return this.finish(id, 'posted', refs);
  }

  /** Voids a pending transfer (the reservation is released); false when it is already voided. */
  async void(id: string): Promise<boolean> {
    return this.finish(id, 'voided', {});
  }

  private async finish(id: string, to: 'posted' | 'voided', refs: Pick<TransferRefs, 'tx_hash'>): Promise<boolean> {
    const t = await this.transferDoc(id);
    if (!t) throw new LedgerError('unknown_transfer', `transfer ${id} does not exist`);
    if (t.status === to) return false;
    if (t.status !== 'pending') throw new LedgerError('not_pending', `transfer ${id} is ${t.status}, not pending`);
    const amount = BigInt(t.amount);
    this.change(t.debit_account, 'debits_pending', -amount);
    this.change(t.credit_account, 'credits_pending', -amount);
    if (to === 'posted') {
      this.change(t.debit_account, 'debits_posted', amount);
      this.change(t.credit_account, 'credits_posted', amount);
      t.posted_at = this.now;
      if (refs.tx_hash) t.tx_hash = refs.tx_hash;
    } else t.voided_at = this.now;
    t.status = to;
    this.transfers.get(id)!.dirty = true;
    if (!carriesHistory(t)) this.storedRows(t);
    return true;
  }

  /** A transfer before format 3 keeps its stored rows: the ones it wrote take its new status (same ids). */
  private storedRows(t: LedgerTransfer) {
    const ids = walletTxIds(t);
    for (const side of SIDES) {
      // both accounts have their entries: change() made them
      const wallet = this.entry(side === 'debit' ? t.debit_account : t.credit_account).wallet;
      if (wallet) this.txRows.set(ids[side], walletTxRow(t, side, ids[side], wallet));
    }
  }

  /** The write operations of everything added so far, for the caller's own `store.write`. */
  ops(): WriteOp[] {
    const out: WriteOp[] = [];
    for (const { doc, loaded, dirty } of this.transfers.values()) {
      if (!dirty) continue;
      out.push(
        loaded === null
          ? { op: 'insert', coll: TRANSFERS, doc: { ...doc, version: 1 } }
          : { op: 'cas', coll: TRANSFERS, doc: { ...doc }, expected: loaded },
      );
    }
    // accounts in one order of ids, so that ledger writes lock them (PostgreSQL) in one order: no deadlock between two
    for (const id of [...this.accounts.keys()].sort()) {
      const e = this.accounts.get(id)!;
      if (!e.dirty) continue;
      const { owner, asset } = e;
      // an account never read has its default flags: no_negative for a wallet's
      const noNegative = e.read ? e.read.flags.includes('no_negative') : e.walletOwned;
      const lowersAvailable = e.delta.credits_posted - e.delta.debits_posted - e.delta.debits_pending < 0n;
      if (!e.seen && !(noNegative && lowersAvailable)) {
        const amounts: Record<string, string> = {};
        for (const f of BALANCES) if (e.delta[f] !== 0n) amounts[f] = e.delta[f].toString();
        out.push({ op: 'add', coll: ACCOUNTS, doc: newAccount(owner, asset, this.now), add: amounts, set: ['updated_at'] });
        continue;
      }
      // checked against what was read: its balance check (a debit) or the caller's decision
      if (e.read === undefined) throw new Error(`ledger batch: account ${id} is checked but was never read`);
      const doc = this.view(id, e);
      out.push(
        e.read === null
          ? { op: 'insert', coll: ACCOUNTS, doc: { ...doc, version: 1 } }
          : { op: 'cas', coll: ACCOUNTS, doc, expected: e.read.version },
      );
    }
    // the transfer's compare-and-set guards the race; the rows follow it
    for (const doc of this.txRows.values()) out.push({ op: 'upsert', coll: WALLET_TXS, doc: { ...doc } });
    return out;
  }
}

export const ledgerBatch = (store: Store, now?: Date) => new LedgerBatch(store, now);

/** The ops of one transfer; `[]` when this exact transfer is already written. */
export async function transferOps(store: Store, spec: TransferSpec, now?: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await b.transfer(spec);
  return b.ops();
}

/** The ops that post a pending transfer; `[]` when it is already posted. */
export async function postPendingOps(
  store: Store,
  transferId: string,
  refs?: Pick<TransferRefs, 'tx_hash'>,
  now?: Date,
): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await b.post(transferId, refs);
  return b.ops();
}

/** The ops that void a pending transfer; `[]` when it is already voided. */
export async function voidPendingOps(store: Store, transferId: string, now?: Date): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  await b.void(transferId);
  return b.ops();
}
