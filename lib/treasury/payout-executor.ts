/**
 * On-chain payout execution (payouts with `execution: 'chain'`; accepted, reserved and presented by
 * lib/payouts). Driven by the due-scanner over `payouts.next_attempt_at`, so any node resumes it.
 *
 *   pending ──(signed tx persisted, same write)──▶ processing ──(outbox final write)──▶ completed | failed
 *
 * - The transaction is created through the outbox (id `payout:<payout id>`): signed in the pool and
 *   persisted with its nonce or blockhash in the same write as `processing`, then broadcast, re-sent
 *   unchanged, confirmed at depth. So a node killed anywhere never yields two transfers for one payout.
 * - Completion posts the payout's pending transfer (id = payout id), books the fee and writes the
 *   `payout.completed` webhook in the outbox's final write; failure voids it (the funds are available
 *   again) with `payout.failed`. A payout never moves backwards: the hooks act only on `processing`.
 * - Senders and fees: the wallet's own key signs. ETH payouts pay their gas from the wallet (merchant):
 *   the fee is reserved when the payout is signed (`feeres:<id>`, pending) and the fee actually paid is
 *   booked at the end (`fee:<id>`). USDC on Ethereum first gets a gas top-up from the platform gas wallet
 *   (`payout:<id>:topup`, booked as a `fee` credit sys:gas → wallet in ETH, so the wallet's ETH ledger
 *   mirrors its address, and reserved as `feeres:<id>` until the payout is final so no ETH payout can spend
 *   it first; the gas the payout burns is then a `fee` debit of the wallet). Solana payouts
 *   have the gas wallet as fee payer (platform: `sys:gas` → `sys:fees` in SOL). `fee_subunits` on the
 *   payout is the network fee in the chain's native coin (wei, lamports), whoever paid it.
 */
import { fromSubunits } from '../core/money.ts';
import { isConflict, type Doc, type WriteOp } from '../store/port.ts';
import { LedgerBatch, accountId, available, isLedgerError, walletAccount, type LedgerAccount } from '../ledger/index.ts';
import { PAYOUTS, payoutEventOp, type PayoutDoc } from '../payouts/model.ts';
import { payoutAuditOp } from '../payouts/audit.ts';
import type { ChainTxDoc, TxDriver, TxIntent } from '../chains/broadcast/types.ts';
import { EthereumTxDriver } from '../chains/ethereum/tx-driver.ts';
import { SolanaTxDriver } from '../chains/solana/tx-driver.ts';
import { gasWalletRef } from './gas-wallet.ts';
import { ChainEngine } from '../chains/engine.ts';
import type { TreasuryDeps } from './engine-deps.ts';
import { bookTopup, bookWalletFee } from './gas-booking.ts';
import { solRentRefusal } from '../chains/solana/rent.ts';
import { custodyInFlight } from '../payouts/custody.ts';
import type { KeyRef } from '../chains/keys.ts';

interface WalletLike extends Doc {
  id: string;
  address: string;
  derivation_index: number;
  chain: 'ethereum' | 'solana';
}

/** what the executor keeps on the payout beside the ledger engineer's fields */
export interface ChainPayoutFields {
  /** topup (Ethereum USDC: gas on its way to the wallet), transfer (ready to sign the payout), sent */
  chain_stage?: 'topup' | 'transfer' | 'sent';
  chain_tx_id?: string | null;
  topup_tx_id?: string | null;
  gas_limit?: string | null;
  gas_price?: string | null;
  topup_fee_subunits?: string | null;
  waiting_reason?: string | null;
}
type ChainPayout = PayoutDoc & ChainPayoutFields;

export type PayoutExecutorDeps = TreasuryDeps;

export class PayoutExecutor extends ChainEngine<ChainPayout, PayoutExecutorDeps> {
  constructor(d: PayoutExecutorDeps) {
    super(d, {
      name: 'payout-executor',
      coll: PAYOUTS,
      dueField: 'next_attempt_at',
      filter: { execution: 'chain', status: { $in: ['pending', 'processing'] } },
    });
    d.broadcaster.hook('payout', (tx) => this.onFinal(tx));
    d.broadcaster.hook('payout_topup', (tx) => this.onTopupFinal(tx));
    // the gas is there: sign the payout now rather than on the next scan
    d.broadcaster.afterFinal('payout_topup', (tx) => this.kick(tx.ref!));
  }

  private cas(p: ChainPayout, changes: Partial<ChainPayout>): WriteOp {
    return { op: 'cas', coll: PAYOUTS, doc: { ...p, ...changes, updated_at: this.now().toISOString() }, expected: p.version! };
  }

  private native(p: Pick<PayoutDoc, 'chain' | 'network'>): string {
    return `${p.chain}:${p.network}:${p.chain === 'ethereum' ? 'ETH' : 'SOL'}`;
  }

  private decimals(p: PayoutDoc): number {
    return this.d.config.rails.find((r) => r.chain === p.chain && r.network === p.network && r.token === p.token)?.decimals ?? 0;
  }

  private async wait(p: ChainPayout, reason: string, ms = this.d.retryMs ?? 30_000): Promise<void> {
    if (p.waiting_reason !== reason) this.log().warn(`payout ${p.id} waits: ${reason}`);
    await this.d.store.write([this.cas(p, { waiting_reason: reason, next_attempt_at: new Date(this.now().getTime() + ms).toISOString() })]);
  }

  /** fails a payout that has no transaction on chain (nothing was ever broadcast for it) */
  private async failUnsent(p: ChainPayout, reason: string): Promise<void> {
    const b = new LedgerBatch(this.d.store, this.now());
    for (const id of [p.id, `feeres:${p.id}`]) {
      const t = await b.transferDoc(id);
      if (t?.status === 'pending') await b.void(id);
    }
    const failed: ChainPayout = { ...p, status: 'failed', failure_reason: reason, next_attempt_at: null };
    await this.d.store.write([
      this.cas(p, { status: 'failed', failure_reason: reason, next_attempt_at: null }),
      ...b.ops(),
      payoutEventOp(failed, Number(fromSubunits(p.amount_subunits, this.decimals(p))), this.now()),
      payoutAuditOp('failed', failed, this.now()),
    ]);
  }

  /** one step of a claimed payout: sign and persist its transaction (or its gas top-up) */
  override async step(p: ChainPayout): Promise<void> {
    if (p.status === 'processing' && p.chain_stage !== 'transfer') {
      // in the outbox; the scanner only needs it again when a top-up finished
      await this.d.store.write([this.cas(p, { next_attempt_at: null })]).catch((e) => {
        if (!isConflict(e)) throw e;
      });
      return;
    }
    const driver = this.d.driver(p.chain, p.network);
    if (!driver) return this.wait(p, `no RPC configured for ${p.chain} ${p.network}`);
    // money moved into this wallet inside the ledger may not be at its address yet: send only once it is
    if (p.status === 'pending' && (await custodyInFlight(this.d.store, p.wallet_id, p.created_at)).length) {
      return this.wait(p, 'custody_move_pending', this.d.pollIntervalMs);
    }
    const wallet = await this.d.store.get<WalletLike>('wallets', p.wallet_id);
    if (!wallet) return this.failUnsent(p, 'wallet not found');
    if (p.chain === 'solana') return this.stepSolana(p, wallet, driver);
    if (!(driver instanceof EthereumTxDriver)) throw new Error('no Ethereum driver');
    return p.token === 'ETH' ? this.stepEth(p, wallet, driver) : this.stepErc20(p, wallet, driver);
  }

  private from(wallet: WalletLike): KeyRef {
    return { role: 'wallet', chain: wallet.chain, index: wallet.derivation_index };
  }

  /** SOL or SPL with the gas wallet as fee payer */
  private async stepSolana(p: ChainPayout, wallet: WalletLike, driver: TxDriver): Promise<void> {
    if (p.token === 'SOL' && driver instanceof SolanaTxDriver) {
      // say so now, not after the transaction's blockhash expired
      const refusal = await solRentRefusal(driver, wallet.address, p.destination, BigInt(p.amount_subunits));
      if (refusal) return this.failUnsent(p, refusal);
    }
    const covers = await this.d.gas.covers('solana', p.network, 10_000n + (p.token === 'SOL' ? 0n : 2_100_000n));
    if (!covers.ok) return this.wait(p, 'gas_wallet_empty');
    const from = this.from(wallet);
    const fee_payer = gasWalletRef(p.chain, p.network);
    const intent: TxIntent =
      p.token === 'SOL'
        ? { chain: 'solana', kind: 'native', from, to: p.destination, lamports: p.amount_subunits, fee_payer }
        : {
            chain: 'solana',
            kind: 'spl',
            from,
            mint: this.d.config.chains.solana[p.network].usdcToken,
            decimals: this.decimals(p),
            to: p.destination,
            amount: p.amount_subunits,
            fee_payer,
          };
    return this.send(p, `payout:${p.id}`, intent, async () => []);
  }

  /** ETH: the wallet pays its gas, reserved with the signing (or the payout fails if it cannot) */
  private async stepEth(p: ChainPayout, wallet: WalletLike, driver: EthereumTxDriver): Promise<void> {
    const intent: TxIntent = { chain: 'ethereum', kind: 'native', from: this.from(wallet), to: p.destination, value: p.amount_subunits };
    const gasPrice = await driver.gasPrice();
    const gasLimit = await driver.gasLimit(intent);
    const reserve = gasPrice * gasLimit;
    const pinned: TxIntent = { ...intent, gas_price: gasPrice.toString(), gas_limit: gasLimit.toString() };
    const asset = this.native(p);
    const acc = await this.d.store.get<LedgerAccount>('ledger_accounts', walletAccount(p.wallet_id, asset));
    if (!acc || available(acc) < reserve)
      return this.failUnsent(p, `insufficient available ETH for the network fee (${fromSubunits(reserve, 18)} ETH)`);
    return this.send(p, `payout:${p.id}`, pinned, async () => {
      const b = new LedgerBatch(this.d.store, this.now());
      await b.transfer({
        id: `feeres:${p.id}`,
        kind: 'fee',
        asset,
        amount: reserve,
        pending: true,
        debit_account: walletAccount(p.wallet_id, asset),
        credit_account: accountId('sys:fees', asset),
        payout_id: p.id,
      });
      return b.ops();
    });
  }

  /** USDC on Ethereum: the wallet needs ETH for gas first (a top-up), then the transfer pinned to it */
  private async stepErc20(p: ChainPayout, wallet: WalletLike, driver: EthereumTxDriver): Promise<void> {
    const from = this.from(wallet);
    const token = this.d.config.chains.ethereum[p.network].usdcToken;
    const transfer: TxIntent = { chain: 'ethereum', kind: 'erc20', from, token, to: p.destination, amount: p.amount_subunits };
    if (p.chain_stage === 'transfer' && p.gas_limit && p.gas_price) {
      return this.send(p, `payout:${p.id}`, { ...transfer, gas_limit: p.gas_limit, gas_price: p.gas_price }, async () => []);
    }
    const gasPrice = await driver.gasPrice();
    const gasLimit = await driver.gasLimit(transfer);
    const topup = gasLimit * gasPrice;
    const covers = await this.d.gas.covers('ethereum', p.network, topup + 21_000n * gasPrice);
    if (!covers.ok) return this.wait(p, 'gas_wallet_empty');
    const topupId = `payout:${p.id}:topup`;
    await this.d.broadcaster.create(
      {
        id: topupId,
        chain: 'ethereum',
        network: p.network,
        purpose: 'payout_topup',
        ref: p.id,
        intent: {
          chain: 'ethereum',
          kind: 'native',
          from: gasWalletRef(p.chain, p.network),
          to: wallet.address,
          value: topup.toString(),
          gas_price: gasPrice.toString(),
        },
      },
      async () => [
        this.cas(p, {
          status: 'processing',
          chain_stage: 'topup',
          topup_tx_id: topupId,
          gas_limit: gasLimit.toString(),
          gas_price: gasPrice.toString(),
          waiting_reason: null,
          next_attempt_at: null,
        }),
      ],
    );
    await this.d.broadcaster.process(topupId);
  }

  private async send(p: ChainPayout, txId: string, intent: TxIntent, extra: () => Promise<WriteOp[]>): Promise<void> {
    try {
      await this.d.broadcaster.create({ id: txId, chain: p.chain, network: p.network, purpose: 'payout', ref: p.id, intent }, async () => {
        const fresh = (await this.d.store.get<ChainPayout>(PAYOUTS, p.id))!;
        return [
          this.cas(fresh, { status: 'processing', chain_stage: 'sent', chain_tx_id: txId, waiting_reason: null, next_attempt_at: null }),
          ...(await extra()),
        ];
      });
    } catch (e) {
      if (isLedgerError(e, 'insufficient_funds')) return this.failUnsent(p, 'insufficient available ETH for the network fee');
      throw e;
    }
    await this.d.broadcaster.process(txId);
  }

  /** the top-up's final write: the wallet's ETH ledger gets the gas it received; the payout is signed next */
  private async onTopupFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const p = await this.d.store.get<ChainPayout>(PAYOUTS, tx.ref!);
    if (!p || p.status !== 'processing' || p.chain_stage !== 'topup') return [];
    const asset = this.native(p);
    const b = new LedgerBatch(this.d.store, this.now());
    const fee = BigInt(tx.fee_subunits ?? '0');
    if (tx.status === 'confirmed') {
      const value = BigInt(tx.attempts.find((a) => a.hash === tx.tx_hash)?.value ?? '0');
      // the top-up is this payout's gas, not the merchant's ETH: reserved until the payout is final (onFinal
      // releases it and books the fee paid), so an ETH payout in between cannot spend it and strand this one
      await bookTopup(b, p.id, p.wallet_id, asset, value, fee, { payout_id: p.id, tx_hash: tx.tx_hash });
      return [
        this.cas(p, { chain_stage: 'transfer', topup_fee_subunits: fee.toString(), next_attempt_at: this.now().toISOString() }),
        ...b.ops(),
      ];
    }
    // the top-up never moved the payout's money: the payout fails and its reservation is released
    await b.void(p.id);
    const failed: ChainPayout = { ...p, status: 'failed', failure_reason: `gas top-up failed: ${tx.failure_reason}` };
    return [
      this.cas(p, { status: 'failed', failure_reason: failed.failure_reason, next_attempt_at: null }),
      ...b.ops(),
      payoutEventOp(failed, Number(fromSubunits(p.amount_subunits, this.decimals(p))), this.now()),
      payoutAuditOp('failed', failed, this.now()),
    ];
  }

  /** the payout transaction's final write: completed (post) or failed (void), fees, webhook */
  private async onFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const p = await this.d.store.get<ChainPayout>(PAYOUTS, tx.ref!);
    if (!p || p.status !== 'processing' || p.chain_tx_id !== tx.id) return [];
    const b = new LedgerBatch(this.d.store, this.now());
    const asset = this.native(p);
    const fee = BigInt(tx.fee_subunits ?? '0');
    const completed = tx.status === 'confirmed';
    if (completed) await b.post(p.id, { tx_hash: tx.tx_hash });
    else await b.void(p.id);
    if (p.chain === 'ethereum') {
      // paid from the wallet's address (its own ETH, or the top-up booked to it); a shortfall after a
      // gas-price bump is the platform's
      await bookWalletFee(b, p.id, p.wallet_id, asset, fee, { payout_id: p.id, tx_hash: tx.tx_hash });
    } else if (fee > 0n) {
      await b.transfer({
        id: `fee:${p.id}`,
        kind: 'fee',
        asset,
        amount: fee,
        debit_account: accountId('sys:gas', asset),
        credit_account: accountId('sys:fees', asset),
        payout_id: p.id,
        tx_hash: tx.tx_hash,
      });
    }
    const at = this.now().toISOString();
    const totalFee = fee + BigInt(p.topup_fee_subunits ?? '0');
    const changes: Partial<ChainPayout> = completed
      ? { status: 'completed', tx_hash: tx.tx_hash, fee_subunits: totalFee.toString(), completed_at: at, next_attempt_at: null }
      : {
          status: 'failed',
          tx_hash: tx.tx_hash,
          fee_subunits: totalFee.toString(),
          failure_reason: tx.failure_reason,
          next_attempt_at: null,
        };
    const final = { ...p, ...changes } as ChainPayout;
    return [
      this.cas(p, changes),
      ...b.ops(),
      payoutEventOp(final, Number(fromSubunits(p.amount_subunits, this.decimals(p))), this.now()),
      payoutAuditOp(completed ? 'completed' : 'failed', final, this.now()),
    ];
  }
}
