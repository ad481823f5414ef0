/**
 * Outgoing Solana transactions: legacy messages with the platform gas wallet as fee payer. A signature
 * binds a recent blockhash; the same bytes are re-sent until they land or the blockhash expires
 * (finalized block height past `last_valid_height` with no attempt found): only then is a new signature
 * safe. Confirmed at SOLANA_<NET>_COMMITMENT.
 */
import { PublicKey, SystemProgram, Transaction, TransactionInstruction, type Connection } from '@solana/web3.js';
import { encodeBase58 } from 'ethers';
import type { Signer } from '../signer.ts';
import type { KeyRef } from '../keys.ts';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, associatedTokenAddress } from '../clients.ts';
import type { ChainTxDoc, TxAttempt, TxCheck, TxDriver, TxIntent } from '../broadcast/types.ts';

export interface SolDriverOptions {
  network: string;
  connection: () => Connection;
  signer: Signer;
  commitment: 'processed' | 'confirmed' | 'finalized';
  now?: () => Date;
}

type SolIntent = Extract<TxIntent, { chain: 'solana' }>;
const RANK = { processed: 0, confirmed: 1, finalized: 2 } as const;

/** SPL Token TransferChecked (instruction 12): amount u64 LE, decimals u8 */
function transferChecked(
  source: PublicKey,
  mint: PublicKey,
  dest: PublicKey,
  owner: PublicKey,
  amount: bigint,
  decimals: number,
): TransactionInstruction {
  const data = Buffer.alloc(10);
  data.writeUInt8(12, 0);
  data.writeBigUInt64LE(amount, 1);
  data.writeUInt8(decimals, 9);
  return new TransactionInstruction({
    programId: new PublicKey(TOKEN_PROGRAM_ID),
    data,
    keys: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: dest, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
  });
}

/** the SPL Memo program (v2); a memo without signer accounts needs no extra signature */
export const MEMO_PROGRAM_ID = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/**
 * A memo carrying the outbox row's id: two equal movements (same wallet, destination, token, amount,
 * signed within one blockhash) would otherwise be byte-identical, one signature for two rows, so that
 * the chain executes one transfer while both rows think they landed.
 */
export function memo(text: string): TransactionInstruction {
  return new TransactionInstruction({ programId: new PublicKey(MEMO_PROGRAM_ID), keys: [], data: Buffer.from(text, 'utf8') });
}

/** Associated Token Account CreateIdempotent (instruction 1): nothing happens when it exists */
function createAtaIdempotent(payer: PublicKey, ata: PublicKey, owner: PublicKey, mint: PublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
    data: Buffer.from([1]),
    keys: [
      { pubkey: payer, isSigner: true, isWritable: true },
      { pubkey: ata, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: new PublicKey(TOKEN_PROGRAM_ID), isSigner: false, isWritable: false },
    ],
  });
}

export class SolanaTxDriver implements TxDriver {
  readonly chain = 'solana' as const;
  readonly network: string;
  private o: SolDriverOptions;

  constructor(o: SolDriverOptions) {
    this.o = o;
    this.network = o.network;
  }

  private sol(intent: TxIntent): SolIntent {
    if (intent.chain !== 'solana') throw new Error('not a Solana intent');
    return intent;
  }

  addresses(intent: TxIntent): { from: string; to: string } {
    const i = this.sol(intent);
    if (i.kind === 'cosign') return { from: i.from_address, to: i.to_address };
    return { from: this.o.signer.address(i.from), to: new PublicKey(i.to).toBase58() };
  }

  private instructions(i: Exclude<SolIntent, { kind: 'cosign' }>): TransactionInstruction[] {
    const from = new PublicKey(this.o.signer.address(i.from));
    const to = new PublicKey(i.to);
    if (i.kind === 'native') return [SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: BigInt(i.lamports) })];
    const payer = new PublicKey(this.o.signer.address(i.fee_payer));
    const mint = new PublicKey(i.mint);
    const source = new PublicKey(associatedTokenAddress(from.toBase58(), i.mint));
    const dest = new PublicKey(associatedTokenAddress(to.toBase58(), i.mint));
    const transfer = transferChecked(source, mint, dest, from, BigInt(i.amount), i.decimals);
    return i.create_account === false ? [transfer] : [createAtaIdempotent(payer, dest, to, mint), transfer];
  }

  async sign(intent: TxIntent, _nonce: number | null, rowId: string): Promise<TxAttempt> {
    const i = this.sol(intent);
    if (i.kind === 'cosign') return this.cosign(i);
    const conn = this.o.connection();
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
    const feePayer = this.o.signer.address(i.fee_payer);
    const tx = new Transaction({ feePayer: new PublicKey(feePayer), blockhash, lastValidBlockHeight });
    tx.add(...this.instructions(i), memo(rowId));
    const message = tx.compileMessage();
    const refs = new Map<string, KeyRef>([
      [feePayer, i.fee_payer],
      [this.o.signer.address(i.from), i.from],
    ]);
    const signers = message.accountKeys.slice(0, message.header.numRequiredSignatures).map((k) => {
      const ref = refs.get(k.toBase58());
      if (!ref) throw new Error(`no key for required signer ${k.toBase58()}`);
      return ref;
    });
    const { raw, hash } = await this.o.signer.sign({
      chain: 'solana',
      keys: signers,
      message: Buffer.from(message.serialize()).toString('base64'),
    });
    return { raw, hash, signed_at: (this.o.now?.() ?? new Date()).toISOString(), blockhash, last_valid_height: lastValidBlockHeight };
  }

  /**
   * The fee payer's signature on someone else's message. Its blockhash is theirs: a blockhash is valid for
   * at most 150 blocks, so the current height + 150 bounds when it can still land.
   */
  private async cosign(i: Extract<SolIntent, { kind: 'cosign' }>): Promise<TxAttempt> {
    const message = Buffer.from(i.message, 'base64');
    const { raw } = await this.o.signer.sign({ chain: 'solana', keys: [i.fee_payer], message: i.message });
    const own = Buffer.from(raw, 'base64').subarray(1, 65);
    const others = i.signatures.slice(1).map((s) => Buffer.from(s, 'base64'));
    const wire = Buffer.concat([Buffer.from([1 + others.length]), own, ...others, message]);
    const height = await this.o.connection().getBlockHeight('confirmed');
    return {
      raw: wire.toString('base64'),
      hash: encodeBase58(own),
      signed_at: (this.o.now?.() ?? new Date()).toISOString(),
      last_valid_height: height + 150,
    };
  }

  private rentMin: bigint | null = null;

  /** lamports an account without data must hold at least (or hold none): Solana refuses anything between */
  async rentExemptMinimum(): Promise<bigint> {
    this.rentMin ??= BigInt(await this.o.connection().getMinimumBalanceForRentExemption(0));
    return this.rentMin;
  }

  async lamports(address: string): Promise<bigint> {
    return BigInt(await this.o.connection().getBalance(new PublicKey(address), 'confirmed'));
  }

  /**
   * What the fee payer spent beyond the fee and the intent's own transfer: the rent of accounts the
   * transaction created (an associated token account), which the fee policy books.
   */
  private rentPaid(
    intent: TxIntent,
    meta: { preBalances: number[]; postBalances: number[] } | null | undefined,
    fee: string | null,
  ): bigint {
    if (!meta || intent.chain !== 'solana') return 0n;
    const spent = BigInt(meta.preBalances[0] ?? 0) - BigInt(meta.postBalances[0] ?? 0);
    const payer = this.o.signer.address(intent.fee_payer);
    const own = intent.kind === 'native' && this.o.signer.address(intent.from) === payer ? BigInt(intent.lamports) : 0n;
    const rent = spent - BigInt(fee ?? '0') - own;
    return rent > 0n ? rent : 0n;
  }

  /** only called once check() said `expired`: no attempt can land any more */
  resign(doc: ChainTxDoc): Promise<TxAttempt> {
    return this.sign(doc.intent, null, doc.id);
  }

  async send(raw: string): Promise<void> {
    const conn = this.o.connection();
    const bytes = Buffer.from(raw, 'base64');
    try {
      await conn.sendRawTransaction(bytes, { skipPreflight: false, preflightCommitment: 'confirmed', maxRetries: 0 });
    } catch (e) {
      if (!/AlreadyProcessed|already been processed/i.test(String((e as Error).message))) throw e;
      // a re-broadcast of bytes that already landed, but only if the chain knows THIS signature: another
      // row's equal transaction must never count as this one's
      const own = encodeBase58(bytes.subarray(1, 65));
      const { value } = await conn.getSignatureStatuses([own], { searchTransactionHistory: true });
      if (value[0]) return;
      throw new Error(`the node says "already processed" but signature ${own} is not on chain`);
    }
  }

  async check(doc: ChainTxDoc): Promise<TxCheck> {
    const conn = this.o.connection();
    // the expiry height is read before the statuses: an attempt that lands after this read is still seen
    const finalizedHeight = await conn.getBlockHeight('finalized');
    const sigs = doc.attempts.map((a) => a.hash);
    const { value } = await conn.getSignatureStatuses(sigs, { searchTransactionHistory: true });
    for (let k = sigs.length - 1; k >= 0; k--) {
      const s = value[k];
      if (!s) continue;
      const level = s.confirmationStatus ?? 'processed';
      if (RANK[level] < RANK[this.o.commitment === 'processed' ? 'confirmed' : this.o.commitment])
        return { state: 'pending', landed: true };
      const tx = await conn.getTransaction(sigs[k]!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      const fee = tx?.meta ? String(tx.meta.fee) : null;
      if (s.err)
        return {
          state: 'failed',
          reason: `the transaction failed on chain: ${JSON.stringify(s.err).slice(0, 200)}`,
          hash: sigs[k]!,
          block: s.slot,
          fee,
        };
      return {
        state: 'confirmed',
        hash: sigs[k]!,
        block: s.slot,
        fee: fee ?? '0',
        rent: this.rentPaid(doc.intent, tx?.meta, fee).toString(),
      };
    }
    const last = doc.attempts[doc.attempts.length - 1]!;
    if (last.last_valid_height !== undefined && finalizedHeight > last.last_valid_height) return { state: 'expired' };
    return { state: 'pending' };
  }
}
