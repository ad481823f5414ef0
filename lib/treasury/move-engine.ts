/**
 * The one top-up → move engine behind sweeps and custody moves: a row moves tokens from an address the
 * platform controls to another, through the transaction outbox, driven by the due-scanner:
 *
 *   waiting ─▶ (Ethereum, gas needed) topup ─▶ waiting(topup_confirmed) ─▶ moving ─▶ completed
 *                      a failed transaction: waiting, attempt + 1 (failed after maxAttempts)
 *
 * The engine owns the stage fields, the step skeleton and the outbox hooks; each kind supplies its
 * `waiting` handler (what to send) and its bookings (what the ledger says when a transaction is final).
 */
import { LedgerBatch, accountId, available, parkedGasAccount, type TransferRefs } from '../ledger/index.ts';
import { bookNetworkCost, bookParkedTopup } from './fee-booking.ts';
import type { Movement } from './fee-policy.ts';
import type { Doc, WriteOp } from '../store/port.ts';
import type { ChainTxDoc, TxIntent } from '../chains/broadcast/types.ts';
import { EthereumTxDriver } from '../chains/ethereum/tx-driver.ts';
import { ChainEngine } from '../chains/engine.ts';
import type { KeyChain } from '../chains/keys.ts';
import { gasWalletRef } from './gas-wallet.ts';
import { nativeAsset, type TreasuryDeps } from './engine-deps.ts';

/** the gas parked at the sender was reserved by another move between the decision and the write */
class ParkedGasTaken extends Error {}

export type MoveStatus = 'waiting' | 'topup' | 'moving' | 'completed' | 'failed';

/** the stage fields every top-up → move row carries */
export interface MoveFields extends Doc {
  id: string;
  chain: KeyChain;
  network: string;
  token: string;
  asset: string;
  status: MoveStatus;
  waiting_reason: string | null;
  /** increases with every new transaction of the same stage (a failed top-up or move is tried again) */
  attempt: number;
  topup_tx: string | null;
  move_tx: string | null;
  /** Ethereum: the gas the top-up paid for, pinned on the move */
  gas_limit: string | null;
  gas_price: string | null;
  /** native smallest units paid in network fees (top-ups + move) */
  fee_subunits: string | null;
  tx_hash: string | null;
  next_check_at: string | null;
  updated_at: string;
  completed_at: string | null;
}

export interface MoveEngineDeps extends TreasuryDeps {
  /** new transactions per stage before a row fails for an operator to look at (default 5) */
  maxAttempts?: number;
}

type EthIntent = Extract<TxIntent, { chain: 'ethereum' }>;

export interface MoveKind {
  name: string;
  coll: string;
  /** outbox purposes of the top-up and of the move */
  topupPurpose: string;
  movePurpose: string;
  /** for log lines and waiting reasons ("sweep", "custody move") */
  noun: string;
  /** the fee policy's name of the movement */
  movement: Movement;
}

export abstract class TopupMoveEngine<T extends MoveFields, D extends MoveEngineDeps> extends ChainEngine<T, D> {
  protected readonly kind: MoveKind;

  constructor(d: D, kind: MoveKind) {
    super(d, { name: kind.name, coll: kind.coll, dueField: 'next_check_at', filter: { status: 'waiting' } });
    this.kind = kind;
    d.broadcaster.hook(kind.topupPurpose, (tx) => this.onTopupFinal(tx));
    d.broadcaster.hook(kind.movePurpose, (tx) => this.onMoveFinal(tx));
    // the gas is there: send the move now rather than on the next scan
    d.broadcaster.afterFinal(kind.topupPurpose, (tx) => this.kick(tx.ref!));
  }

  /** what a waiting row does next: wait, top up, or move */
  protected abstract onWaiting(row: T): Promise<void>;
  /** outbox ids of the row's transactions (stable per attempt, so a retried step signs nothing twice) */
  protected abstract txId(row: T, stage: 'topup' | 'move'): string;
  /** the address that sends the move (and receives its top-up) */
  protected abstract payer(row: T): string;
  /** the references the row's ledger transfers carry (the payout or spend behind it) */
  protected abstract refs(row: T): TransferRefs;
  /** the ledger side of a final move beyond its network cost (a sweep's settlements) */
  protected async bookMove(_row: T, _tx: ChainTxDoc, _b: LedgerBatch): Promise<void> {}

  /**
   * A final transaction's network cost, per the fee policy: a top-up's value parked at the payer's
   * address (the platform's, never the wallet's) and its fee; a move's fee burnt from the gas parked at
   * its sender (Ethereum, topped up) or paid by the gas wallet (Solana fee payer), with any rent.
   */
  protected async bookCost(row: T, tx: ChainTxDoc, b: LedgerBatch, stage: 'topup' | 'move'): Promise<void> {
    const fee = BigInt(tx.fee_subunits ?? '0');
    const refs = { ...this.refs(row), ...(tx.tx_hash ? { tx_hash: tx.tx_hash } : {}) };
    if (stage === 'topup' && tx.status === 'confirmed') {
      const value = BigInt(tx.attempts.find((a) => a.hash === tx.tx_hash)?.value ?? '0');
      return bookParkedTopup(b, tx.id, this.payer(row), this.native(row), value, fee, refs);
    }
    const fromParked = stage === 'move' && row.chain === 'ethereum';
    if (fromParked) {
      const reservation = await b.transferDoc(`gasres:${tx.id}`);
      if (reservation?.status === 'pending') await b.void(reservation.id);
    }
    await bookNetworkCost(b, {
      movement: this.kind.movement,
      key: tx.id,
      asset: this.native(row),
      fee,
      rent: BigInt(tx.rent_subunits ?? '0'),
      ...(fromParked ? { address: this.payer(row) } : {}),
      refs,
    });
  }

  /** One step of a due row (claimed: its version is current). */
  override async step(row: T): Promise<void> {
    if (row.status !== 'waiting') return; // topup / moving advance through the outbox hooks
    if (row.attempt >= (this.d.maxAttempts ?? 5)) return this.giveUp(row);
    return this.onWaiting(row);
  }

  protected due(ms = 0): string {
    return new Date(this.now().getTime() + ms).toISOString();
  }

  protected cas(row: T, changes: Partial<T>): WriteOp {
    return { op: 'cas', coll: this.kind.coll, doc: { ...row, ...changes, updated_at: this.now().toISOString() }, expected: row.version! };
  }

  protected native(row: T): string {
    return nativeAsset(row);
  }

  protected async wait(row: T, reason: string, ms = this.d.retryMs ?? 30_000): Promise<void> {
    if (row.waiting_reason !== reason) this.log().warn(`${this.kind.noun} ${row.id} (${row.asset}) waits: ${reason}`);
    await this.d.store.write([this.cas(row, { status: 'waiting', waiting_reason: reason, next_check_at: this.due(ms) } as Partial<T>)]);
  }

  private async giveUp(row: T): Promise<void> {
    await this.d.store.write([
      this.cas(row, { status: 'failed', waiting_reason: 'too many failed transactions', next_check_at: null } as Partial<T>),
    ]);
    this.log().warn(`${this.kind.noun} ${row.id} failed after ${row.attempt} attempts; it waits for an operator`);
  }

  /** the Solana fee payer (the gas wallet) holds a signature fee and, for tokens, a token account's rent */
  protected async solanaGasCovers(row: T): Promise<boolean> {
    return (await this.d.gas.covers('solana', row.network, 10_000n + (row.token === 'SOL' ? 0n : 2_100_000n))).ok;
  }

  /** the row's top-up landed: the move may now be sent, pinned to the gas it paid for */
  protected toppedUp(row: T): boolean {
    return !!(row.gas_limit && row.gas_price && row.waiting_reason === 'topup_confirmed');
  }

  protected pinned(row: T, intent: EthIntent): TxIntent {
    return { ...intent, gas_limit: row.gas_limit!, gas_price: row.gas_price! };
  }

  /**
   * Ethereum, the platform paying the gas: the move pinned to its gas, paid from the platform gas parked
   * at the sender (`sys:gas@<address>`). What is parked there already (a top-up's leftover) is netted:
   * only the shortfall is topped up from the gas wallet (waits while it cannot pay), and nothing when
   * the parked gas covers the move.
   */
  protected async topupThenMove(row: T, intent: EthIntent, payer: string): Promise<void> {
    if (this.toppedUp(row)) return this.move(row, this.pinned(row, intent), payer);
    const driver = this.d.driver(row.chain, row.network);
    if (!(driver instanceof EthereumTxDriver)) throw new Error(`no Ethereum driver for ${row.network}`);
    const gasPrice = await driver.gasPrice();
    const gasLimit = await driver.gasLimit(intent);
    const needed = gasLimit * gasPrice;
    const parked = await this.parkedAvailable(payer, this.native(row));
    const gas = { gas_limit: gasLimit.toString(), gas_price: gasPrice.toString() };
    if (parked >= needed) return this.move({ ...row, ...gas } as T, { ...intent, ...gas }, payer);
    const topup = needed - parked;
    const covers = await this.d.gas.covers('ethereum', row.network, topup + 21_000n * gasPrice);
    if (!covers.ok) return this.wait(row, 'gas_wallet_empty');
    const txId = this.txId(row, 'topup');
    await this.d.broadcaster.create(
      {
        id: txId,
        chain: 'ethereum',
        network: row.network,
        purpose: this.kind.topupPurpose,
        ref: row.id,
        intent: {
          chain: 'ethereum',
          kind: 'native',
          from: gasWalletRef('ethereum', row.network),
          to: payer,
          value: topup.toString(),
          gas_price: gasPrice.toString(),
        },
      },
      async () => [this.cas(row, { status: 'topup', waiting_reason: null, topup_tx: txId, ...gas, next_check_at: null } as Partial<T>)],
    );
    await this.d.broadcaster.process(txId);
  }

  /** parked platform gas at `address` not yet reserved by a move */
  private async parkedAvailable(address: string, asset: string): Promise<bigint> {
    return available(await new LedgerBatch(this.d.store, this.now()).account(parkedGasAccount(address, asset)));
  }

  /**
   * Persists the move (row → moving in the same write) and sends it. `parkedPayer`: an Ethereum move
   * whose gas the platform parked at that address; its gas is reserved there in the same write
   * (`gasres:<tx>`), so two moves from one address never count on the same parked gas.
   */
  protected async move(row: T, intent: TxIntent, parkedPayer?: string): Promise<void> {
    const txId = this.txId(row, 'move');
    const spec = { id: txId, chain: row.chain, network: row.network, purpose: this.kind.movePurpose, ref: row.id, intent };
    try {
      await this.d.broadcaster.create(spec, async () => [
        this.cas(row, { status: 'moving', waiting_reason: null, move_tx: txId, next_check_at: null } as Partial<T>),
        ...(parkedPayer ? await this.reserveParked(row, txId, parkedPayer) : []),
      ]);
    } catch (e) {
      if (!(e instanceof ParkedGasTaken)) throw e;
      // another move took the parked gas first: a new top-up (a new attempt: its own outbox id) next step
      this.log().warn(`${this.kind.noun} ${row.id}: the gas parked at its sender was taken by another move; topping up again`);
      await this.d.store.write([
        this.cas(row, {
          status: 'waiting',
          waiting_reason: 'parked_gas_taken',
          attempt: row.attempt + 1,
          next_check_at: this.due(),
        } as Partial<T>),
      ]);
      return;
    }
    await this.d.broadcaster.process(txId);
  }

  private async reserveParked(row: T, txId: string, address: string): Promise<WriteOp[]> {
    const b = new LedgerBatch(this.d.store, this.now());
    const asset = this.native(row);
    const amount = BigInt(row.gas_limit!) * BigInt(row.gas_price!);
    const parked = await b.account(parkedGasAccount(address, asset));
    if (available(parked) < amount) throw new ParkedGasTaken();
    await b.transfer({
      id: `gasres:${txId}`,
      kind: 'fee',
      asset,
      amount,
      pending: true,
      debit_account: parked.id,
      credit_account: accountId('sys:fees', asset),
      ...this.refs(row),
    });
    return b.ops();
  }

  private async current(tx: ChainTxDoc, status: MoveStatus, field: 'topup_tx' | 'move_tx'): Promise<T | null> {
    const row = await this.d.store.get<T>(this.kind.coll, tx.ref!);
    return row && row.status === status && row[field] === tx.id ? row : null;
  }

  private fees(row: T, tx: ChainTxDoc): bigint {
    return BigInt(row.fee_subunits ?? '0') + BigInt(tx.fee_subunits ?? '0');
  }

  /** the top-up's final write: the move is sent next (confirmed) or a new top-up later (failed) */
  private async onTopupFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const row = await this.current(tx, 'topup', 'topup_tx');
    if (!row) return [];
    const b = new LedgerBatch(this.d.store, this.now());
    await this.bookCost(row, tx, b, 'topup');
    const fees = this.fees(row, tx).toString();
    const changes =
      tx.status === 'confirmed'
        ? { status: 'waiting', waiting_reason: 'topup_confirmed', fee_subunits: fees, next_check_at: this.due() }
        : {
            status: 'waiting',
            waiting_reason: `topup failed: ${tx.failure_reason}`,
            attempt: row.attempt + 1,
            fee_subunits: fees,
            gas_limit: null,
            gas_price: null,
            next_check_at: this.due(),
          };
    return [this.cas(row, changes as Partial<T>), ...b.ops()];
  }

  /** the move's final write: completed, or a new attempt later; its fees booked by the kind */
  private async onMoveFinal(tx: ChainTxDoc): Promise<WriteOp[]> {
    const row = await this.current(tx, 'moving', 'move_tx');
    if (!row) return [];
    const fees = this.fees(row, tx);
    const b = new LedgerBatch(this.d.store, this.now());
    await this.bookMove(row, tx, b); // first: an ETH sweep's fee is charged to the money it makes available
    await this.bookCost(row, tx, b, 'move');
    if (tx.status === 'confirmed') {
      const done = {
        status: 'completed',
        waiting_reason: null,
        fee_subunits: fees.toString(),
        tx_hash: tx.tx_hash,
        completed_at: this.now().toISOString(),
        next_check_at: null,
      };
      return [this.cas(row, done as Partial<T>), ...b.ops()];
    }
    this.log().warn(`${this.kind.noun} ${row.id} transaction failed (${tx.failure_reason}); trying again`);
    const again = {
      status: 'waiting',
      waiting_reason: `${this.kind.noun === 'sweep' ? 'sweep' : 'move'} failed: ${tx.failure_reason}`,
      attempt: row.attempt + 1,
      fee_subunits: fees.toString(),
      topup_tx: null,
      gas_limit: null,
      gas_price: null,
      next_check_at: this.due(this.d.retryMs ?? 30_000),
    };
    return [this.cas(row, again as Partial<T>), ...b.ops()];
  }
}
