/**
 * On-chain execution of money leaving a merchant wallet (`execution: 'chain'`): payouts (accepted,
 * reserved and presented by lib/payouts) and refunds (lib/refunds), each a kind of its own (`OutgoingKind`:
 * its collection, outbox purpose, ledger references and the ops that end it). Driven by the due-scanner
 * over the kind's `next_attempt_at`, so any node resumes it.
 *
 *   pending ──(signed tx persisted, same write)──▶ processing ──(outbox final write)──▶ completed | failed
 *
 * - The transaction is created through the outbox (id `payout:<payout id>`): signed in the pool and
 *   persisted with its nonce or blockhash in the same write as `processing`, then broadcast, re-sent
 *   unchanged, confirmed at depth. So a node killed anywhere never yields two transfers for one payout.
 * - Who pays (./fee-policy.ts): the merchant. The wallet's own address pays everything its payout costs
 *   on chain: the gas on Ethereum (ETH and USDC alike: no platform top-up), the signature fee and a new
 *   destination token account's rent on Solana (the wallet is its own fee payer). The quote reserved at
 *   acceptance (`feeres:<id>`) pins the transaction's gas; a payout accepted without one (an agent
 *   spend) is quoted and reserved when it is signed, or fails if the wallet cannot pay its fee.
 * - Completion posts the payout's pending transfer (id = payout id) and charges exactly what the chain
 *   took (./fee-booking.ts) with the `payout.completed` webhook in the outbox's final write; failure voids
 *   it (the funds are available again; a fee burnt on chain is still charged) with `payout.failed`. A
 *   payout never moves backwards: the hook acts only on `processing`. A refund is executed the same way
 *   (outbox id `refund:<id>`, fee-policy movement `refund`); its kind adds its own ops to the final write.
 */
import { fromSubunits } from '../core/money.ts';
import { isConflict, type Doc, type WriteOp } from '../store/port.ts';
import { LedgerBatch, isLedgerError, type TransferRefs } from '../ledger/index.ts';
import { PAYOUTS, payoutEventOp, type PayoutDoc, type PayoutStatus } from '../payouts/model.ts';
import { payoutAuditOp } from '../payouts/audit.ts';
import type { ChainTxDoc, TxIntent } from '../chains/broadcast/types.ts';
import { SolanaTxDriver } from '../chains/solana/tx-driver.ts';
import { ChainEngine } from '../chains/engine.ts';
import { nativeAsset, type TreasuryDeps } from './engine-deps.ts';
import { bookNetworkCost, reserveFee } from './fee-booking.ts';
import type { QuoteFee } from './fee-quote.ts';
import { solFeePayerRefusal, solRentRefusal } from '../chains/solana/rent.ts';
import { custodyInFlight } from '../payouts/custody.ts';
import { associatedTokenAddress } from '../chains/clients.ts';
import type { KeyRef } from '../chains/keys.ts';

interface WalletLike extends Doc {
  id: string;
  address: string;
  derivation_index: number;
  chain: 'ethereum' | 'solana';
}

/** what the executor keeps on the payout beside the ledger engineer's fields */
export interface ChainPayoutFields {
  /** sent: the transaction is in the outbox */
  chain_stage?: 'sent';
  chain_tx_id?: string | null;
}

/** What the executor reads and writes of a record of money leaving a wallet (a payout, a refund). */
export type OutgoingDoc = Pick<
  PayoutDoc,
  | 'id'
  | 'merchant_id'
  | 'wallet_id'
  | 'chain'
  | 'network'
  | 'token'
  | 'amount_subunits'
  | 'tx_hash'
  | 'fee_subunits'
  | 'fee_quote'
  | 'waiting_reason'
  | 'failure_reason'
  | 'next_attempt_at'
  | 'created_at'
  | 'updated_at'
  | 'completed_at'
  | 'version'
> &
  Doc & { status: PayoutStatus; destination: string | null };

/** One kind of money out: where its records live and what ends one. */
export interface OutgoingKind<T extends OutgoingDoc> {
  /** the fee policy's movement, also the outbox purpose and the prefix of the outbox row's id */
  movement: 'payout' | 'refund';
  coll: string;
  /** references the ledger transfers of its network cost carry */
  refs(r: T): TransferRefs;
  /** the ops that end a record (`final` is completed or failed): its webhook, audit and the kind's own */
  endOps(final: T, amount: number, now: Date): Promise<WriteOp[]>;
}

export const PAYOUT_KIND: OutgoingKind<PayoutDoc> = {
  movement: 'payout',
  coll: PAYOUTS,
  refs: (p) => ({ payout_id: p.id }),
  endOps: async (p, amount, now) => [
    payoutEventOp(p, amount, now),
    payoutAuditOp(p.status === 'completed' ? 'completed' : 'failed', p, now),
  ],
};

type ChainPayout = OutgoingDoc & ChainPayoutFields;

export interface PayoutExecutorDeps extends TreasuryDeps {
  /** quotes payouts accepted without a fee reservation (agent spends) */
  quoteFee: QuoteFee;
}

export class PayoutExecutor extends ChainEngine<ChainPayout, PayoutExecutorDeps> {
  private readonly kind: OutgoingKind<ChainPayout>;

  constructor(d: PayoutExecutorDeps, kind: OutgoingKind<never> = PAYOUT_KIND as OutgoingKind<never>) {
    super(d, {
      name: `${kind.movement}-executor`,
      coll: kind.coll,
      dueField: 'next_attempt_at',
      filter: { execution: 'chain', status: { $in: ['pending', 'processing'] } },
    });
    this.kind = kind as unknown as OutgoingKind<ChainPayout>;
    d.broadcaster.hook(kind.movement, (tx) => this.onFinal(tx));
  }

  private cas(p: ChainPayout, changes: Partial<ChainPayout>): WriteOp {
    return { op: 'cas', coll: this.kind.coll, doc: { ...p, ...changes, updated_at: this.now().toISOString() }, expected: p.version! };
  }

  private amountOf(p: ChainPayout): number {
    return Number(fromSubunits(p.amount_subunits, this.decimals(p)));
  }

  private decimals(p: OutgoingDoc): number {
    return this.d.config.rails.find((r) => r.chain === p.chain && r.network === p.network && r.token === p.token)?.decimals ?? 0;
  }

  private async wait(p: ChainPayout, reason: string, ms = this.d.retryMs ?? 30_000): Promise<void> {
    if (p.waiting_reason !== reason) this.log().warn(`${this.kind.movement} ${p.id} waits: ${reason}`);
    await this.d.store.write([this.cas(p, { waiting_reason: reason, next_attempt_at: new Date(this.now().getTime() + ms).toISOString() })]);
  }

  /** fails a payout that has no transaction on chain (nothing was ever broadcast for it) */
  private async failUnsent(p: ChainPayout, reason: string): Promise<void> {
    const b = new LedgerBatch(this.d.store, this.now());
    for (const id of [p.id, `feeres:${p.id}`]) {
      const t = await b.transferDoc(id);
      if (t?.status === 'pending') await b.void(id);
    }
    const changes = { status: 'failed', failure_reason: reason, fee_subunits: '0', waiting_reason: null, next_attempt_at: null } as const;
    const failed: ChainPayout = { ...p, ...changes };
    await this.d.store.write([this.cas(p, changes), ...b.ops(), ...(await this.kind.endOps(failed, this.amountOf(p), this.now()))]);
  }

  /** one step of a claimed payout: sign and persist its transaction */
  override async step(p: ChainPayout): Promise<void> {
    if (!p.destination) return this.failUnsent(p, 'no destination');
    if (p.status === 'processing') {
      // in the outbox: its final write moves the payout on; the scanner needs it no more
      await this.d.store.write([this.cas(p, { next_attempt_at: null })]).catch((e) => {
        if (!isConflict(e)) throw e;
      });
      return;
    }
    const driver = this.d.driver(p.chain, p.network);
    if (!driver) return this.wait(p, `no RPC configured for ${p.chain} ${p.network}`);
    // money moved into this wallet inside the ledger may not be at its address yet: send only once it is
    if ((await custodyInFlight(this.d.store, p.wallet_id, p.created_at)).length) {
      return this.wait(p, 'custody_move_pending', this.d.pollIntervalMs);
    }
    const wallet = await this.d.store.get<WalletLike>('wallets', p.wallet_id);
    if (!wallet) return this.failUnsent(p, 'wallet not found');
    const quoted = await this.quoted(p, wallet);
    if (p.chain === 'solana' && driver instanceof SolanaTxDriver) {
      // say so now, not after the transaction's blockhash expired (the wallet pays its fee and rent too)
      const fee = BigInt(quoted.p.fee_quote?.fee_subunits ?? '0');
      const refusal =
        p.token === 'SOL'
          ? await solRentRefusal(driver, wallet.address, p.destination, BigInt(p.amount_subunits), this.kind.movement, fee)
          : ((await solFeePayerRefusal(driver, wallet.address, fee)) ?? (await this.tokenAccountGone(driver, quoted.p)));
      if (refusal) return this.failUnsent(p, refusal);
    }
    return this.send(quoted.p, this.intent(quoted.p, wallet), quoted.ops);
  }

  /**
   * An SPL payout quoted without rent (the destination's token account existed) creates no account: if
   * it was closed since, the transfer could not land, and creating it would spend rent nobody reserved.
   */
  private async tokenAccountGone(driver: SolanaTxDriver, p: ChainPayout): Promise<string | null> {
    if (BigInt(p.fee_quote?.rent_subunits ?? '0') > 0n) return null;
    const ata = associatedTokenAddress(p.destination!, this.d.config.chains.solana[p.network].usdcToken);
    if ((await driver.lamports(ata)) > 0n) return null;
    return `the destination's token account was closed after the ${this.kind.movement} was quoted (its rent was not reserved): ${this.kind.movement === 'payout' ? 'pay out' : 'refund'} again, the new quote includes the rent`;
  }

  /**
   * The payout with its fee quote and the ops that reserve it. Accepted payouts carry one (reserved with
   * the amount); a payout written without one (an agent spend) is quoted now and reserved in the signing
   * write (built afresh on every try of that write, so racing reservations on one wallet re-read).
   */
  private async quoted(p: ChainPayout, wallet: WalletLike): Promise<{ p: ChainPayout; ops: () => Promise<WriteOp[]> }> {
    if (p.fee_quote) return { p, ops: async () => [] };
    const q = await this.d.quoteFee({
      chain: p.chain,
      network: p.network,
      token: p.token,
      from: wallet.address,
      destination: p.destination!,
      amount: BigInt(p.amount_subunits),
    });
    const fee_quote = {
      fee_subunits: q.fee_subunits.toString(),
      rent_subunits: q.rent.toString(),
      gas_limit: q.gas_limit?.toString() ?? null,
      gas_price: q.gas_price?.toString() ?? null,
    };
    const ops = async () => {
      const b = new LedgerBatch(this.d.store, this.now());
      await reserveFee(b, { key: p.id, walletId: p.wallet_id, asset: nativeAsset(p), amount: q.fee_subunits, refs: this.kind.refs(p) });
      return b.ops();
    };
    return { p: { ...p, fee_quote, fee_subunits: fee_quote.fee_subunits }, ops };
  }

  /** the wallet's own transaction: it signs, and pays its gas (Ethereum, pinned to the quote) or fee (Solana) */
  private intent(p: ChainPayout, wallet: WalletLike): TxIntent {
    const from: KeyRef = { role: 'wallet', chain: wallet.chain, index: wallet.derivation_index };
    const to = p.destination!;
    if (p.chain === 'solana') {
      return p.token === 'SOL'
        ? { chain: 'solana', kind: 'native', from, to, lamports: p.amount_subunits, fee_payer: from }
        : {
            chain: 'solana',
            kind: 'spl',
            from,
            mint: this.d.config.chains.solana[p.network].usdcToken,
            decimals: this.decimals(p),
            to,
            amount: p.amount_subunits,
            fee_payer: from,
            // the destination's token account is created only when its rent was quoted and reserved
            create_account: BigInt(p.fee_quote?.rent_subunits ?? '0') > 0n,
          };
    }
    const q = p.fee_quote;
    const gas = q?.gas_limit && q.gas_price ? { gas_limit: q.gas_limit, gas_price: q.gas_price } : {};
    return p.token === 'ETH'
      ? { chain: 'ethereum', kind: 'native', from, to, value: p.amount_subunits, ...gas }
      : {
          chain: 'ethereum',
          kind: 'erc20',
          from,
          token: this.d.config.chains.ethereum[p.network].usdcToken,
          to,
          amount: p.amount_subunits,
          ...gas,
        };
  }

  private async send(p: ChainPayout, intent: TxIntent, extra: () => Promise<WriteOp[]>): Promise<void> {
    const txId = `${this.kind.movement}:${p.id}`;
    const spec = { id: txId, chain: p.chain, network: p.network, purpose: this.kind.movement, ref: p.id, intent };
    try {
      await this.d.broadcaster.create(spec, async () => this.signingOps(p, txId, extra));
    } catch (e) {
      if (!isLedgerError(e, 'insufficient_funds')) throw e;
      const coin = nativeAsset(p).split(':')[2]!;
      const fee = fromSubunits(p.fee_subunits ?? '0', coin === 'ETH' ? 18 : 9);
      return this.failUnsent(p, `insufficient available ${coin} for the network fee (${fee} ${coin}), which the merchant pays`);
    }
    await this.d.broadcaster.process(txId);
  }

  /** the write that persists the signed transaction: the payout → processing, with its fee quote */
  private async signingOps(p: ChainPayout, txId: string, extra: () => Promise<WriteOp[]>): Promise<WriteOp[]> {
    const fresh = (await this.d.store.get<ChainPayout>(this.kind.coll, p.id))!;
    const { fee_quote, fee_subunits } = p;
    const processing = { status: 'processing', chain_stage: 'sent', chain_tx_id: txId, fee_quote, fee_subunits } as const;
    return [this.cas(fresh, { ...processing, waiting_reason: null, next_attempt_at: null }), ...(await extra())];
  }

  /** the payout transaction's final write: completed (post) or failed (void), the fee charged, webhook */
  private async onFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const p = await this.d.store.get<ChainPayout>(this.kind.coll, tx.ref!);
    if (!p || p.status !== 'processing' || p.chain_tx_id !== tx.id) return [];
    const b = new LedgerBatch(this.d.store, this.now());
    const completed = tx.status === 'confirmed';
    if (completed) await b.post(p.id, { tx_hash: tx.tx_hash });
    else await b.void(p.id);
    const wallet = await this.d.store.get<WalletLike>('wallets', p.wallet_id);
    const booked = await bookNetworkCost(b, {
      movement: this.kind.movement,
      key: p.id,
      asset: nativeAsset(p),
      fee: BigInt(tx.fee_subunits ?? '0'),
      rent: BigInt(tx.rent_subunits ?? '0'),
      walletId: p.wallet_id,
      ...(wallet ? { address: wallet.address } : {}),
      refs: { ...this.kind.refs(p), ...(tx.tx_hash ? { tx_hash: tx.tx_hash } : {}) },
    });
    const at = this.now().toISOString();
    const fee_subunits = booked.charged.toString();
    const changes: Partial<ChainPayout> = completed
      ? { status: 'completed', tx_hash: tx.tx_hash, fee_subunits, completed_at: at, next_attempt_at: null }
      : { status: 'failed', tx_hash: tx.tx_hash, fee_subunits, failure_reason: tx.failure_reason, next_attempt_at: null };
    const final = { ...p, ...changes } as ChainPayout;
    return [this.cas(p, changes), ...b.ops(), ...(await this.kind.endOps(final, this.amountOf(p), this.now()))];
  }
}
