/**
 * Custody moves on chain (lib/payouts/custody.ts): the tokens behind an internal transfer go from the
 * sending wallet's address to the receiving wallet's, through the transaction outbox (persisted before
 * broadcast, never sent twice, resumed by any node), driven by the due-scanner over `custody_moves`.
 *
 *   waiting ─▶ (Ethereum) topup ─▶ waiting(topup_confirmed) ─▶ moving ─▶ completed
 *                                         failed transaction: waiting, attempt + 1 (failed after maxAttempts)
 *
 * - The ledger already moved the balance; the move books only network fees. The platform bears them all,
 *   so the receiving address gets exactly the amount and the sender's own ETH is untouched: on Ethereum
 *   (USDC and ETH alike) the gas wallet tops the sender's address up with exactly gas limit × gas price and
 *   the move is pinned to that gas (booked like a USDC payout's top-up: lib/treasury/gas-booking.ts, so the
 *   sender's ETH ledger mirrors its address, unused top-up gas included); on Solana the gas wallet is the
 *   fee payer (`fee:<move tx>` sys:gas → sys:fees in SOL; token-account rent stays a platform cost).
 * - A move out of a wallet that itself received money by a still unconfirmed earlier move waits for it.
 * - While the gas wallet cannot pay, the move waits (`gas_wallet_empty`, logged), never fails silently.
 */
import type { WriteOp } from '../store/port.ts';
import { LedgerBatch, accountId } from '../ledger/index.ts';
import { CUSTODY_MOVES, custodyInFlight, custodyRefs, type CustodyMoveDoc } from '../payouts/custody.ts';
import type { Config } from '../../config/index.ts';
import type { ChainTxDoc, TxDriver, TxIntent } from '../chains/broadcast/types.ts';
import { EthereumTxDriver } from '../chains/ethereum/tx-driver.ts';
import { SolanaTxDriver } from '../chains/solana/tx-driver.ts';
import { solRentRefusal } from '../chains/solana/rent.ts';
import { gasWalletRef, type GasWallets } from './gas-wallet.ts';
import { bookTopup, bookWalletFee } from './gas-booking.ts';
import { ChainEngine, type ChainEngineDeps } from '../chains/engine.ts';
import type { KeyRef } from '../chains/keys.ts';

export interface CustodyMoverDeps extends ChainEngineDeps {
  config: Pick<Config, 'rails' | 'chains'>;
  driver(chain: string, network: string): TxDriver | null;
  gas: GasWallets;
  /** how long a move waiting for gas waits before it is tried again (default 30 s) */
  retryMs?: number;
  /** new transactions per stage before a move is marked failed for an operator (default 5) */
  maxAttempts?: number;
}

export class CustodyMover extends ChainEngine<CustodyMoveDoc, CustodyMoverDeps> {
  constructor(d: CustodyMoverDeps) {
    super(d, { name: 'custody-moves', coll: CUSTODY_MOVES, dueField: 'next_check_at', filter: { status: 'waiting' } });
    d.broadcaster.hook('custody_topup', (tx) => this.onTopupFinal(tx));
    d.broadcaster.hook('custody', (tx) => this.onMoveFinal(tx));
    // kick: a step for one move now, if it is due (after the internal transfer, after its top-up landed)
    d.broadcaster.afterFinal('custody_topup', (tx) => this.kick(tx.ref!));
  }

  private due(ms = 0): string {
    return new Date(this.now().getTime() + ms).toISOString();
  }

  private cas(m: CustodyMoveDoc, changes: Partial<CustodyMoveDoc>): WriteOp {
    return { op: 'cas', coll: CUSTODY_MOVES, doc: { ...m, ...changes, updated_at: this.now().toISOString() }, expected: m.version! };
  }

  private async wait(m: CustodyMoveDoc, reason: string, ms = this.d.retryMs ?? 30_000): Promise<void> {
    if (m.waiting_reason !== reason) this.log().warn(`custody move ${m.id} (${m.asset}) waits: ${reason}`);
    await this.d.store.write([this.cas(m, { status: 'waiting', waiting_reason: reason, next_check_at: this.due(ms) })]);
  }

  private native(m: CustodyMoveDoc): string {
    return `${m.chain}:${m.network}:${m.chain === 'ethereum' ? 'ETH' : 'SOL'}`;
  }

  /** One step of a due move (claimed: its version is current). */
  override async step(m: CustodyMoveDoc): Promise<void> {
    if (m.status !== 'waiting') return; // topup / moving advance through the outbox hooks
    if (m.attempt >= (this.d.maxAttempts ?? 5)) {
      await this.d.store.write([this.cas(m, { status: 'failed', waiting_reason: 'too many failed transactions', next_check_at: null })]);
      this.log().warn(`custody move ${m.id} failed after ${m.attempt} attempts; payouts from ${m.to_wallet_id} wait for an operator`);
      return;
    }
    const driver = this.d.driver(m.chain, m.network);
    if (!driver) return this.wait(m, `no RPC configured for ${m.chain} ${m.network}`);
    const from: KeyRef = { role: 'wallet', chain: m.chain, index: m.from_index };
    const gasRef = gasWalletRef(m.chain, m.network);
    const id = `${m.id}:move:${m.attempt}`;
    const intent: TxIntent | null =
      m.chain !== 'ethereum'
        ? null
        : m.token === 'ETH'
          ? { chain: 'ethereum', kind: 'native', from, to: m.to_address, value: m.amount_subunits }
          : {
              chain: 'ethereum',
              kind: 'erc20',
              from,
              token: this.d.config.chains.ethereum[m.network].usdcToken,
              to: m.to_address,
              amount: m.amount_subunits,
            };
    if (intent && m.gas_limit && m.gas_price && m.waiting_reason === 'topup_confirmed') {
      return this.move(m, id, { ...intent, gas_limit: m.gas_limit, gas_price: m.gas_price } as TxIntent);
    }
    if ((await custodyInFlight(this.d.store, m.from_wallet_id, m.created_at, m.id)).length) {
      return this.wait(m, 'custody_move_pending', this.d.pollIntervalMs);
    }
    if (m.chain === 'solana') {
      if (m.token === 'SOL' && driver instanceof SolanaTxDriver) {
        // the chain would refuse it until the sender's balance changes: wait (logged) rather than burn attempts
        const refusal = await solRentRefusal(driver, m.from_address, m.to_address, BigInt(m.amount_subunits), 'custody move');
        if (refusal) return this.wait(m, refusal);
      }
      const covers = await this.d.gas.covers('solana', m.network, 10_000n + (m.token === 'SOL' ? 0n : 2_100_000n));
      if (!covers.ok) return this.wait(m, 'gas_wallet_empty');
      const sol = this.d.config.chains.solana[m.network];
      const decimals =
        this.d.config.rails.find((r) => r.chain === 'solana' && r.network === m.network && r.token === m.token)?.decimals ?? 6;
      return this.move(
        m,
        id,
        m.token === 'SOL'
          ? { chain: 'solana', kind: 'native', from, to: m.to_address, lamports: m.amount_subunits, fee_payer: gasRef }
          : {
              chain: 'solana',
              kind: 'spl',
              from,
              mint: sol.usdcToken,
              decimals,
              to: m.to_address,
              amount: m.amount_subunits,
              fee_payer: gasRef,
            },
      );
    }
    if (!(driver instanceof EthereumTxDriver) || !intent) throw new Error(`no Ethereum driver for ${m.network}`);
    // the platform pays the move's gas: a top-up of exactly that to the sender, then the move pinned to it
    const gasPrice = await driver.gasPrice();
    const gasLimit = await driver.gasLimit(intent);
    const topup = gasLimit * gasPrice;
    const covers = await this.d.gas.covers('ethereum', m.network, topup + 21_000n * gasPrice);
    if (!covers.ok) return this.wait(m, 'gas_wallet_empty');
    const txId = `${m.id}:topup:${m.attempt}`;
    await this.d.broadcaster.create(
      {
        id: txId,
        chain: 'ethereum',
        network: m.network,
        purpose: 'custody_topup',
        ref: m.id,
        intent: {
          chain: 'ethereum',
          kind: 'native',
          from: gasRef,
          to: m.from_address,
          value: topup.toString(),
          gas_price: gasPrice.toString(),
        },
      },
      async () => [
        this.cas(m, {
          status: 'topup',
          waiting_reason: null,
          topup_tx: txId,
          gas_limit: gasLimit.toString(),
          gas_price: gasPrice.toString(),
          next_check_at: null,
        }),
      ],
    );
    await this.d.broadcaster.process(txId);
  }

  private async move(m: CustodyMoveDoc, txId: string, intent: TxIntent): Promise<void> {
    await this.d.broadcaster.create({ id: txId, chain: m.chain, network: m.network, purpose: 'custody', ref: m.id, intent }, async () => [
      this.cas(m, { status: 'moving', waiting_reason: null, move_tx: txId, next_check_at: null }),
    ]);
    await this.d.broadcaster.process(txId);
  }

  /** the top-up's final write: its ETH booked to the sender (reserved for the move); the move is signed next */
  private async onTopupFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const m = await this.d.store.get<CustodyMoveDoc>(CUSTODY_MOVES, tx.ref!);
    if (!m || m.status !== 'topup' || m.topup_tx !== tx.id) return [];
    const fee = BigInt(tx.fee_subunits ?? '0');
    const fees = (BigInt(m.fee_subunits ?? '0') + fee).toString();
    if (tx.status !== 'confirmed') {
      const b = new LedgerBatch(this.d.store, this.now());
      if (fee > 0n)
        await b.transfer({
          id: `fee:${tx.id}`,
          kind: 'fee',
          asset: this.native(m),
          amount: fee,
          debit_account: accountId('sys:gas', this.native(m)),
          credit_account: accountId('sys:fees', this.native(m)),
          ...custodyRefs(m),
          tx_hash: tx.tx_hash,
        });
      return [
        this.cas(m, {
          status: 'waiting',
          waiting_reason: `topup failed: ${tx.failure_reason}`,
          attempt: m.attempt + 1,
          fee_subunits: fees,
          gas_limit: null,
          gas_price: null,
          next_check_at: this.due(),
        }),
        ...b.ops(),
      ];
    }
    const b = new LedgerBatch(this.d.store, this.now());
    const value = BigInt(tx.attempts.find((a) => a.hash === tx.tx_hash)?.value ?? '0');
    await bookTopup(b, tx.id, m.from_wallet_id, this.native(m), value, fee, { ...custodyRefs(m), tx_hash: tx.tx_hash });
    return [
      this.cas(m, { status: 'waiting', waiting_reason: 'topup_confirmed', fee_subunits: fees, next_check_at: this.due() }),
      ...b.ops(),
    ];
  }

  /** the move's final write: completed, or a new attempt later; its network fee booked either way */
  private async onMoveFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const m = await this.d.store.get<CustodyMoveDoc>(CUSTODY_MOVES, tx.ref!);
    if (!m || m.status !== 'moving' || m.move_tx !== tx.id) return [];
    const fee = BigInt(tx.fee_subunits ?? '0');
    const native = this.native(m);
    const b = new LedgerBatch(this.d.store, this.now());
    const refs = { ...custodyRefs(m), ...(tx.tx_hash ? { tx_hash: tx.tx_hash } : {}) };
    if (m.chain === 'ethereum') {
      // paid from the sender's address out of the top-up booked to it (whose reservation ends here)
      if (m.topup_tx) await bookWalletFee(b, m.topup_tx, m.from_wallet_id, native, fee, refs);
    } else if (fee > 0n) {
      await b.transfer({
        id: `fee:${tx.id}`,
        kind: 'fee',
        asset: native,
        amount: fee,
        debit_account: accountId('sys:gas', native),
        credit_account: accountId('sys:fees', native),
        ...refs,
      });
    }
    const fees = (BigInt(m.fee_subunits ?? '0') + fee).toString();
    if (tx.status === 'confirmed') {
      return [
        this.cas(m, {
          status: 'completed',
          waiting_reason: null,
          fee_subunits: fees,
          tx_hash: tx.tx_hash,
          completed_at: this.now().toISOString(),
          next_check_at: null,
        }),
        ...b.ops(),
      ];
    }
    this.log().warn(`custody move ${m.id} transaction failed (${tx.failure_reason}); trying again`);
    return [
      this.cas(m, {
        status: 'waiting',
        waiting_reason: `move failed: ${tx.failure_reason}`,
        attempt: m.attempt + 1,
        fee_subunits: fees,
        topup_tx: null,
        gas_limit: null,
        gas_price: null,
        next_check_at: this.due(this.d.retryMs ?? 30_000),
      }),
      ...b.ops(),
    ];
  }
}
