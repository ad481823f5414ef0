/**
 * The ledger's invariants, checked over everything stored (operator command `ledger:check`, property test):
 * 1. per asset, the balances of all accounts sum to zero (posted, and pending debits equal pending credits);
 * 2. no wallet account is below zero (posted, or available after reservations);
 * 3. every account's totals equal the sum of its transfers;
 * 4. every stored wallet transaction maps to exactly one transfer, and every wallet side of a transfer before
 *    format 3 has exactly one stored wallet transaction, with the transfer's amount and status; a transfer of
 *    format 3 names the wallet of each side and carries its history key (./wallet-history.ts), and no stored row.
 */
import type { Store } from '../store/port.ts';
import { ACCOUNTS, TRANSFERS, WALLET_TXS, available, postedBalance, walletOfAccount, type LedgerAccount } from './accounts.ts';
import { walletTxType, type LedgerTransfer, type WalletTxRow } from './transfers.ts';
import { carriesHistory, historyKey, walletTxId } from './wallet-tx-ids.ts';

export interface LedgerSnapshot {
  accounts: LedgerAccount[];
  transfers: LedgerTransfer[];
  walletTxs: WalletTxRow[];
}

export interface LedgerReport {
  ok: boolean;
  problems: string[];
  counts: { accounts: number; transfers: number; wallet_transactions: number; assets: number };
}

export function checkLedger(s: LedgerSnapshot): LedgerReport {
  const problems: string[] = [];
  const perAsset = new Map<string, { posted: bigint; dp: bigint; cp: bigint }>();
  for (const a of s.accounts) {
    const t = perAsset.get(a.asset) ?? { posted: 0n, dp: 0n, cp: 0n };
    t.posted += postedBalance(a);
    t.dp += BigInt(a.debits_pending);
    t.cp += BigInt(a.credits_pending);
    perAsset.set(a.asset, t);
    if (a.flags.includes('no_negative') && (postedBalance(a) < 0n || available(a) < 0n)) {
      problems.push(`account ${a.id} is below zero (posted ${postedBalance(a)}, available ${available(a)})`);
    }
    for (const f of ['debits_posted', 'credits_posted', 'debits_pending', 'credits_pending'] as const) {
      if (BigInt(a[f]) < 0n) problems.push(`account ${a.id} has negative ${f}`);
    }
  }
  for (const [asset, t] of perAsset) {
    if (t.posted !== 0n) problems.push(`asset ${asset}: posted balances sum to ${t.posted}, not 0`);
    if (t.dp !== t.cp) problems.push(`asset ${asset}: pending debits ${t.dp} differ from pending credits ${t.cp}`);
  }

  const expected = new Map<string, { dpo: bigint; cpo: bigint; dpe: bigint; cpe: bigint }>();
  const slot = (id: string) => {
    let e = expected.get(id);
    if (!e) expected.set(id, (e = { dpo: 0n, cpo: 0n, dpe: 0n, cpe: 0n }));
    return e;
  };
  const rows = new Map(s.walletTxs.map((r) => [r.id, r]));
  const mapped = new Set<string>();
  /** the wallet transactions of transfers of format 3 (derived, not stored) */
  let derived = 0;
  for (const t of s.transfers) {
    const amount = BigInt(t.amount);
    const d = slot(t.debit_account);
    const c = slot(t.credit_account);
    if (t.status === 'posted') {
      d.dpo += amount;
      c.cpo += amount;
    }
    if (t.status === 'pending') {
      d.dpe += amount;
      c.cpe += amount;
    }
    if (carriesHistory(t)) {
      const debit = walletOfAccount(t.debit_account) ?? undefined;
      const credit = walletOfAccount(t.credit_account) ?? undefined;
      derived += (debit ? 1 : 0) + (credit ? 1 : 0);
      if (t.debit_wallet_id !== debit || t.credit_wallet_id !== credit || t.history_key !== (debit || credit ? historyKey(t) : undefined))
        problems.push(`transfer ${t.id}: its wallet history fields do not match its accounts`);
      continue;
    }
    for (const side of ['debit', 'credit'] as const) {
      const wallet = walletOfAccount(side === 'debit' ? t.debit_account : t.credit_account);
      if (!wallet) continue;
      const id = walletTxId(t, side);
      const r = rows.get(id);
      if (!r) {
        problems.push(`transfer ${t.id}: no wallet transaction for its ${side} side`);
        continue;
      }
      mapped.add(id);
      if (
        r.transfer_id !== t.id ||
        r.wallet_id !== wallet ||
        r.amount !== t.amount ||
        r.status !== t.status ||
        r.type !== walletTxType(t.kind, side)
      ) {
        problems.push(`wallet transaction ${id} does not match transfer ${t.id}`);
      }
    }
  }
  for (const r of s.walletTxs) if (!mapped.has(r.id)) problems.push(`wallet transaction ${r.id} maps to no transfer`);
  const byId = new Map(s.accounts.map((a) => [a.id, a]));
  for (const [id, e] of expected) {
    const a = byId.get(id);
    if (!a) {
      problems.push(`transfers reference missing account ${id}`);
      continue;
    }
    if (
      BigInt(a.debits_posted) !== e.dpo ||
      BigInt(a.credits_posted) !== e.cpo ||
      BigInt(a.debits_pending) !== e.dpe ||
      BigInt(a.credits_pending) !== e.cpe
    ) {
      problems.push(`account ${id}: totals differ from the sum of its transfers`);
    }
  }
  for (const a of s.accounts) {
    if (
      !expected.has(a.id) &&
      (a.debits_posted !== '0' || a.credits_posted !== '0' || a.debits_pending !== '0' || a.credits_pending !== '0')
    ) {
      problems.push(`account ${a.id} has totals but no transfers`);
    }
  }
  return {
    ok: problems.length === 0,
    problems,
    counts: {
      accounts: s.accounts.length,
      transfers: s.transfers.length,
      wallet_transactions: s.walletTxs.length + derived,
      assets: perAsset.size,
    },
  };
}

/** Reads a whole collection in id order, a page at a time. */
async function readAll<T extends { id: string }>(store: Store, coll: string, page = 1000): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (;;) {
    const batch = await store.find<T & { version?: number }>(coll, after ? { id: { $gt: after } } : {}, { sort: 'id', limit: page });
    out.push(...batch);
    if (batch.length < page) return out;
    after = batch[batch.length - 1].id;
  }
}

export async function loadLedger(store: Store): Promise<LedgerSnapshot> {
  // transfers first: an account written after this read can only add, which the check reports as a
  // difference; run it on a quiet store (or twice) to tell a race from a fault
  const transfers = await readAll<LedgerTransfer>(store, TRANSFERS);
  const walletTxs = await readAll<WalletTxRow>(store, WALLET_TXS);
  const accounts = await readAll<LedgerAccount>(store, ACCOUNTS);
  return { accounts, transfers, walletTxs };
}

export async function checkStoredLedger(store: Store): Promise<LedgerReport> {
  return checkLedger(await loadLedger(store));
}
