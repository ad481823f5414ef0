/**
 * Reading Solana for reconciliation (raw JSON-RPC through lib/treasury/reconcile/rpc.ts, counted): a
 * transaction's effect from getTransaction (jsonParsed: pre/post lamports per account, pre/post token
 * balances per token account and owner), signature statuses, and balances of many owners and their
 * token accounts in one getMultipleAccounts call, whose context slot is the slot they were read at.
 * Solana cannot be asked for a balance at a past slot: the stated slot is the one the node answered at.
 */
import { associatedTokenAddress } from '../../chains/clients.ts';
import { keyToString, type AccountKeyLike, type TokenBalanceLike } from '../../chains/solana/parse.ts';
import { JsonRpc } from './rpc.ts';
import { NATIVE, addDelta, type TxEffect } from './effects.ts';

type Commitment = 'processed' | 'confirmed' | 'finalized';

interface ParsedTx {
  slot: number;
  transaction: { signatures: string[]; message: { accountKeys: AccountKeyLike[] } };
  meta: {
    err: unknown;
    fee: number | string;
    preBalances: Array<number | string>;
    postBalances: Array<number | string>;
    preTokenBalances?: TokenBalanceLike[] | null;
    postTokenBalances?: TokenBalanceLike[] | null;
  } | null;
}

export interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
}

export interface SignatureStatus {
  slot: number;
  ok: boolean;
  confirmationStatus: Commitment | null;
}

/** one owner's balances read in a batch: lamports and, per mint asked, its associated token account */
export interface OwnerBalances {
  lamports: bigint;
  tokens: Map<string, bigint>;
}

const MAX_ACCOUNTS = 100;
const MAX_STATUSES = 256;

export class SolanaReader {
  readonly rpc: JsonRpc;
  private readonly commitment: Commitment;

  constructor(rpc: JsonRpc, commitment: Commitment) {
    this.rpc = rpc;
    // history is read at confirmed at least (the lowest level those methods accept)
    this.commitment = commitment === 'processed' ? 'confirmed' : commitment;
  }

  async slot(): Promise<number> {
    return this.rpc.call<number>('getSlot', [{ commitment: this.commitment }]);
  }

  async effect(signature: string): Promise<TxEffect | null> {
    const tx = await this.rpc.call<ParsedTx | null>('getTransaction', [
      signature,
      { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: this.commitment },
    ]);
    if (!tx?.meta) return null;
    const keys = tx.transaction.message.accountKeys.map(keyToString);
    const deltas = new Map<string, bigint>();
    const pre = tx.meta.preBalances.map((v) => BigInt(v));
    const post = tx.meta.postBalances.map((v) => BigInt(v));
    keys.forEach((k, i) => addDelta(deltas, k, NATIVE, (post[i] ?? 0n) - (pre[i] ?? 0n)));
    const preTok = new Map((tx.meta.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    let rent = 0n;
    const seen = new Set<number>();
    for (const b of tx.meta.postTokenBalances ?? []) {
      seen.add(b.accountIndex);
      const before = preTok.get(b.accountIndex);
      const owner = b.owner ?? keys[b.accountIndex]!;
      const was = before && before.mint === b.mint ? BigInt(before.uiTokenAmount.amount) : 0n;
      addDelta(deltas, owner, b.mint, BigInt(b.uiTokenAmount.amount) - was);
      // a token account this transaction created: its lamports are rent
      if (!before && (pre[b.accountIndex] ?? 0n) === 0n) rent += post[b.accountIndex] ?? 0n;
    }
    for (const [index, b] of preTok) {
      if (seen.has(index)) continue; // closed in this transaction: its tokens left
      addDelta(deltas, b.owner ?? keys[index]!, b.mint, -BigInt(b.uiTokenAmount.amount));
    }
    return {
      hash: signature,
      block: tx.slot,
      ok: tx.meta.err === null || tx.meta.err === undefined,
      fee: BigInt(tx.meta.fee),
      feePayer: keys[0]!,
      deltas,
      rent,
    };
  }

  /** statuses of signatures (null: unknown to the node) */
  async statuses(signatures: string[]): Promise<Array<SignatureStatus | null>> {
    const out: Array<SignatureStatus | null> = [];
    for (let i = 0; i < signatures.length; i += MAX_STATUSES) {
      const r = await this.rpc.call<{
        value: Array<{ slot: number; err: unknown; confirmationStatus?: Commitment | null } | null>;
      }>('getSignatureStatuses', [signatures.slice(i, i + MAX_STATUSES), { searchTransactionHistory: true }]);
      for (const s of r.value)
        out.push(s ? { slot: s.slot, ok: s.err === null || s.err === undefined, confirmationStatus: s.confirmationStatus ?? null } : null);
    }
    return out;
  }

  /**
   * Lamports of each owner and its token balance per mint, in getMultipleAccounts calls of up to 100
   * accounts; `slot` is the lowest context slot of those calls (each owner's figures come from one call,
   * so they are consistent with each other at that call's slot, which `slots` gives per owner).
   */
  async balances(
    owners: string[],
    mints: string[],
  ): Promise<{ slot: number; slots: Map<string, number>; values: Map<string, OwnerBalances> }> {
    const perOwner = 1 + mints.length;
    const ownersPerCall = Math.max(1, Math.floor(MAX_ACCOUNTS / perOwner));
    const values = new Map<string, OwnerBalances>();
    const slots = new Map<string, number>();
    let slot = Number.MAX_SAFE_INTEGER;
    await Promise.all(
      chunk(owners, ownersPerCall).map(async (group) => {
        const keys = group.flatMap((o) => [o, ...mints.map((m) => associatedTokenAddress(o, m))]);
        const r = await this.rpc.call<{
          context: { slot: number };
          value: Array<{ lamports: number | string; data: [string, string] } | null>;
        }>('getMultipleAccounts', [keys, { encoding: 'base64', commitment: this.commitment }]);
        slot = Math.min(slot, r.context.slot);
        group.forEach((o, gi) => {
          const base = gi * perOwner;
          const own = r.value[base];
          const tokens = new Map<string, bigint>();
          mints.forEach((m, mi) => {
            const acc = r.value[base + 1 + mi];
            // SPL token account layout: mint (32) owner (32) amount (u64 LE)
            const data = acc ? Buffer.from(acc.data[0], 'base64') : null;
            tokens.set(m, data && data.length >= 72 ? data.readBigUInt64LE(64) : 0n);
          });
          values.set(o, { lamports: own ? BigInt(own.lamports) : 0n, tokens });
          slots.set(o, r.context.slot);
        });
      }),
    );
    return { slot: slot === Number.MAX_SAFE_INTEGER ? await this.slot() : slot, slots, values };
  }

  /** signatures of an address newer than `until` (newest first), up to `max` */
  async signatures(address: string, until: string | null, max = 1000): Promise<SignatureInfo[]> {
    const out: SignatureInfo[] = [];
    let before: string | undefined;
    while (out.length < max) {
      const page = await this.rpc.call<SignatureInfo[]>('getSignaturesForAddress', [
        address,
        {
          limit: Math.min(1000, max - out.length),
          commitment: this.commitment,
          ...(until ? { until } : {}),
          ...(before ? { before } : {}),
        },
      ]);
      out.push(...page.map((s) => ({ signature: s.signature, slot: s.slot, err: s.err })));
      if (page.length < 1000) break;
      before = page[page.length - 1]!.signature;
    }
    return out;
  }
}

function chunk<T>(xs: T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}
