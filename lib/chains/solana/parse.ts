// Deposits to a set of owner addresses, read from one Solana transaction as returned by
// getTransaction with encoding "jsonParsed" (raw JSON-RPC, or @solana/web3.js's
// getParsedTransaction(s), whose account keys are PublicKey objects).
//
// The transaction's effect is read from its balances, not from instruction shapes, so every way
// of paying counts the same (a plain transfer, transferChecked, a transfer made by a program
// through CPI, several transfers in one transaction):
// - SOL: an owner address among the account keys whose lamport balance went up (post − pre > 0);
// - SPL: a token account (meta.pre/postTokenBalances) whose owner is in the set, whose mint is
//   accepted and whose token program is accepted, whose balance went up.
// A failed transaction (meta.err set) pays nothing. The sender of a deposit (who a refund goes back to)
// is read from balances too: for SPL the one owner whose token accounts of that mint went down; for SOL
// the one other account whose lamports went down beyond the fee it paid. More than one (a batch, a
// program moving several parties' money) or none leaves it unknown (null). Each deposit is keyed by
// (signature, index) where index is the credited account's position in the transaction's
// account keys: unique within the transaction, stable on every replay.
// Pure: no I/O.

export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';
export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM_ID = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ASSOCIATED_TOKEN_PROGRAM_ID = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

/** A public key as JSON-RPC (string) or web3.js (PublicKey) gives it. */
export type KeyLike = string | { toBase58(): string };

export type AccountKeyLike = KeyLike | { pubkey: KeyLike };

export interface TokenBalanceLike {
  accountIndex: number;
  mint: string;
  owner?: string | null;
  programId?: string | null;
  uiTokenAmount: { amount: string; decimals: number };
}

/** The parts of a jsonParsed getTransaction result that deposits are read from. */
export interface ParsedTransactionLike {
  slot: number;
  blockTime?: number | null;
  transaction: {
    signatures: readonly string[];
    message: { accountKeys: readonly AccountKeyLike[] };
  };
  meta: {
    err: unknown;
    /** lamports the fee payer (account 0) paid */
    fee?: number | string | bigint;
    preBalances: readonly (number | string | bigint)[];
    postBalances: readonly (number | string | bigint)[];
    preTokenBalances?: readonly TokenBalanceLike[] | null;
    postTokenBalances?: readonly TokenBalanceLike[] | null;
  } | null;
}

export interface SolanaDeposit {
  signature: string;
  slot: number;
  blockTime: number | null;
  /** position of the credited account in the transaction's account keys */
  index: number;
  /** the watched address that was paid */
  owner: string;
  /** null for SOL; the mint for SPL tokens */
  mint: string | null;
  /** the account whose balance went up: the owner itself for SOL, the token account for SPL */
  account: string;
  /** the token program that owns the token account; null for SOL */
  tokenProgram: string | null;
  /** integer amount in smallest units (lamports, or token base units), as a digit string */
  amount: string;
  /** who paid it (see the file header), or null when the transaction does not say unambiguously */
  sender: string | null;
}

export interface ExtractDepositsOptions {
  /** the watched owner addresses (session addresses) */
  owners: ReadonlySet<string> | ((address: string) => boolean);
  /** accepted mints; omitted: any mint (the caller then filters on deposit.mint) */
  mints?: ReadonlySet<string>;
  /** accepted token programs (default: the classic SPL Token program only) */
  tokenProgramIds?: ReadonlySet<string>;
  /** read SOL deposits (default true) */
  sol?: boolean;
  /** read SPL token deposits (default true) */
  tokens?: boolean;
}

const DEFAULT_TOKEN_PROGRAMS: ReadonlySet<string> = new Set([TOKEN_PROGRAM_ID]);

export function keyToString(key: AccountKeyLike): string {
  if (typeof key === 'string') return key;
  if ('pubkey' in key) return keyToString(key.pubkey);
  return key.toBase58();
}

function toBigInt(v: number | string | bigint | undefined): bigint | null {
  if (v === undefined) return null;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  return /^\d+$/.test(v) ? BigInt(v) : null;
}

/** Deposits to watched owners in one transaction (see the file header for the rules). */
export function extractSolanaDeposits(tx: ParsedTransactionLike, options: ExtractDepositsOptions): SolanaDeposit[] {
  const meta = tx.meta;
  if (!meta || (meta.err !== null && meta.err !== undefined)) return [];
  const signature = tx.transaction.signatures[0];
  if (!signature) return [];
  const isOwner = typeof options.owners === 'function' ? options.owners : (a: string) => (options.owners as ReadonlySet<string>).has(a);
  const tokenPrograms = options.tokenProgramIds ?? DEFAULT_TOKEN_PROGRAMS;
  const keys = tx.transaction.message.accountKeys.map(keyToString);
  const blockTime = tx.blockTime ?? null;
  const out: SolanaDeposit[] = [];

  if (options.sol !== false) {
    for (let i = 0; i < keys.length; i++) {
      const owner = keys[i]!;
      if (!isOwner(owner)) continue;
      const pre = toBigInt(meta.preBalances[i]);
      const post = toBigInt(meta.postBalances[i]);
      if (pre === null || post === null || post <= pre) continue;
      out.push({
        signature,
        slot: tx.slot,
        blockTime,
        index: i,
        owner,
        mint: null,
        account: owner,
        tokenProgram: null,
        amount: (post - pre).toString(),
        sender: solSender(tx, keys, i),
      });
    }
  }

  if (options.tokens !== false) {
    const preByIndex = new Map<number, TokenBalanceLike>();
    for (const b of meta.preTokenBalances ?? []) preByIndex.set(b.accountIndex, b);
    for (const post of meta.postTokenBalances ?? []) {
      const owner = post.owner;
      if (!owner || !isOwner(owner)) continue;
      if (!post.programId || !tokenPrograms.has(post.programId)) continue;
      if (options.mints && !options.mints.has(post.mint)) continue;
      const account = keys[post.accountIndex];
      if (account === undefined) continue;
      const postAmount = toBigInt(post.uiTokenAmount.amount);
      const preEntry = preByIndex.get(post.accountIndex);
      // a token account created in this transaction has no pre entry: it held nothing before;
      // one whose mint changed (closed and re-created) also started from nothing for this mint
      const preAmount = preEntry && preEntry.mint === post.mint ? toBigInt(preEntry.uiTokenAmount.amount) : 0n;
      if (postAmount === null || preAmount === null || postAmount <= preAmount) continue;
      out.push({
        signature,
        slot: tx.slot,
        blockTime,
        index: post.accountIndex,
        owner,
        mint: post.mint,
        account,
        tokenProgram: post.programId,
        amount: (postAmount - preAmount).toString(),
        sender: tokenSender(meta, post.mint, owner),
      });
    }
  }

  out.sort((a, b) => a.index - b.index);
  return out;
}

/** the one account other than the credited one whose lamports went down beyond the fee it paid */
function solSender(tx: ParsedTransactionLike, keys: string[], credited: number): string | null {
  const meta = tx.meta!;
  const fee = toBigInt(meta.fee ?? 0) ?? 0n;
  const senders = new Set<string>();
  for (let i = 0; i < keys.length; i++) {
    if (i === credited || keys[i] === keys[credited]) continue;
    const pre = toBigInt(meta.preBalances[i]);
    const post = toBigInt(meta.postBalances[i]);
    if (pre === null || post === null) continue;
    if (pre - post - (i === 0 ? fee : 0n) > 0n) senders.add(keys[i]!);
  }
  return senders.size === 1 ? [...senders][0]! : null;
}

/** the one owner (not the receiver) whose token accounts of `mint` went down */
function tokenSender(meta: NonNullable<ParsedTransactionLike['meta']>, mint: string, receiver: string): string | null {
  const post = new Map<number, TokenBalanceLike>();
  for (const b of meta.postTokenBalances ?? []) post.set(b.accountIndex, b);
  const senders = new Set<string>();
  for (const pre of meta.preTokenBalances ?? []) {
    if (pre.mint !== mint || !pre.owner || pre.owner === receiver) continue;
    const before = toBigInt(pre.uiTokenAmount.amount);
    const after = post.get(pre.accountIndex);
    // a token account closed in the transaction has no post entry: it went to zero
    const now = after && after.mint === mint ? toBigInt(after.uiTokenAmount.amount) : 0n;
    if (before !== null && now !== null && now < before) senders.add(pre.owner);
  }
  return senders.size === 1 ? [...senders][0]! : null;
}
