/**
 * Ledger accounts (TigerBeetle's model in our own store). An account belongs to an owner in one asset:
 * id `acc:<owner>:<asset>`, asset being the rail key `chain:network:TOKEN`. Owners are wallet ids
 * (`wal_…`, merchant and agent wallets: never negative) or the system names below. Every transfer debits
 * one account and credits another by the same amount, so per asset the balances of all accounts sum to zero.
 */
import type { Doc } from '../store/port.ts';

/**
 * System owners. Their balances are the mirror image of the wallets' and are allowed to go negative.
 * - `sys:chain`: real money that entered from (negative) or left to (positive) a blockchain.
 * - `sys:simulated`: sandbox money with no chain behind it (simulated deposits and simulated payouts).
 * - `sys:payouts`: the counterparty of payouts while and after they leave a wallet; its posted credits are
 *   everything paid out.
 * - `sys:fees`: network fees booked as `fee` transfers.
 * - `sys:losses`: the platform's share of a reorged deposit that the wallet had already spent
 *   (a reversal never drives a wallet below zero; the shortfall lands here for an operator to see).
 * - `sys:gas`: the platform's gas wallets (what they paid out: top-ups, fees, rent).
 * - `sys:rent`: lamports locked as Solana token-account rent by a movement (booked, never free money).
 * - `sys:gas@<address>`: platform gas parked at an address the platform controls (a top-up's ETH at a
 *   wallet or deposit address): never a wallet's balance; burnt by the moves it pays for, the rest
 *   netted against the next top-up to that address. The address holds its wallet's ETH plus this.
 */
export const SYSTEM_OWNERS = ['sys:chain', 'sys:simulated', 'sys:payouts', 'sys:fees', 'sys:losses', 'sys:gas', 'sys:rent'] as const;
export type SystemOwner = (typeof SYSTEM_OWNERS)[number];

export const ACCOUNT_FLAGS = ['no_negative'] as const;
export type AccountFlag = (typeof ACCOUNT_FLAGS)[number];

export interface LedgerAccount extends Doc {
  id: string;
  owner: string;
  asset: string;
  debits_posted: string;
  credits_posted: string;
  debits_pending: string;
  credits_pending: string;
  flags: AccountFlag[];
  created_at: string;
  updated_at: string;
  version: number;
}

export const ACCOUNTS = 'ledger_accounts';
export const TRANSFERS = 'ledger_transfers';
export const WALLET_TXS = 'wallet_transactions';

export const accountId = (owner: string, asset: string) => `acc:${owner}:${asset}`;

/**
 * The accounts of an owner, as a condition on their ids (`acc:<owner>:` and anything after it, `;` being
 * the character after `:`): found through the primary key, so the accounts need no index of their owner,
 * which every balance update (a compare-and-set or an add of a whole document) had to rewrite.
 */
export const ownerIds = (owner: string) => ({ id: { $gte: `acc:${owner}:`, $lt: `acc:${owner};` } });

/** Splits `acc:<owner>:<asset>`; owners never contain ':' except the `sys:` prefix. */
export function parseAccountId(id: string): { owner: string; asset: string } {
  const rest = id.slice(4);
  const sys = rest.startsWith('sys:');
  const i = rest.indexOf(':', sys ? 4 : 0);
  return { owner: rest.slice(0, i), asset: rest.slice(i + 1) };
}

export const isWalletOwner = (owner: string) => owner.startsWith('wal_');

/** the account of the platform's gas parked at `address` (see SYSTEM_OWNERS) */
export const PARKED_GAS_PREFIX = 'sys:gas@';
export const parkedGasAccount = (address: string, asset: string) => accountId(`${PARKED_GAS_PREFIX}${address}`, asset);

/**
 * A wallet keeps sandbox-simulated money apart from money that exists on chain, in a sub-account owned
 * by `<wallet id>.sim`: simulated money can only leave as a simulated payout, and reconciliation compares
 * the chain with the on-chain account alone.
 */
export const SIMULATED_SUFFIX = '.sim';
export const walletOwner = (walletId: string, simulated = false) => (simulated ? `${walletId}${SIMULATED_SUFFIX}` : walletId);
export const walletAccount = (walletId: string, asset: string, simulated = false) => accountId(walletOwner(walletId, simulated), asset);

/** The wallet an account belongs to (either sub-account), or null for a system account. */
export const walletOfAccount = (id: string): string | null => {
  const { owner } = parseAccountId(id);
  if (!isWalletOwner(owner)) return null;
  return owner.endsWith(SIMULATED_SUFFIX) ? owner.slice(0, -SIMULATED_SUFFIX.length) : owner;
};
export const isSimulatedAccount = (id: string) => parseAccountId(id).owner.endsWith(SIMULATED_SUFFIX);

/** Wallet accounts must never go negative; system accounts mirror them and may. */
export const defaultFlags = (owner: string): AccountFlag[] => (isWalletOwner(owner) ? ['no_negative'] : []);

export function newAccount(owner: string, asset: string, now: string): LedgerAccount {
  return {
    id: accountId(owner, asset),
    owner,
    asset,
    debits_posted: '0',
    credits_posted: '0',
    debits_pending: '0',
    credits_pending: '0',
    flags: defaultFlags(owner),
    created_at: now,
    updated_at: now,
    version: 0,
  };
}

/** What a wallet may spend: posted credits − posted debits − reserved (pending) debits. */
export const available = (a: Pick<LedgerAccount, 'credits_posted' | 'debits_posted' | 'debits_pending'>): bigint =>
  BigInt(a.credits_posted) - BigInt(a.debits_posted) - BigInt(a.debits_pending);

/** Incoming money not yet available (a deposit still at its deposit address). */
export const incoming = (a: Pick<LedgerAccount, 'credits_pending'>): bigint => BigInt(a.credits_pending);

/** Signed posted balance, credit-normal (a wallet's money is positive). */
export const postedBalance = (a: Pick<LedgerAccount, 'credits_posted' | 'debits_posted'>): bigint =>
  BigInt(a.credits_posted) - BigInt(a.debits_posted);
