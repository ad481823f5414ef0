/**
 * Sweeps: the money of counted deposits leaves the session's deposit address for the merchant wallet's
 * own address, and only then becomes available (the deposit's pending settlement transfer is posted in
 * the same write as the sweep's completion).
 *
 * - Which: pending `settlement` transfers (`set:<deposit key>`) grouped by session and asset. A sweep
 *   takes its deposits by a unique insert per deposit key (`sweep_claims`) in the same write as the
 *   sweep, so no deposit is ever swept twice, on any node.
 * - How: ETH directly (the gas comes out of the swept amount); USDC on Ethereum after a gas top-up of
 *   exactly gas limit × gas price from the platform gas wallet, the sweep pinned to that gas; SOL and SPL
 *   USDC with the gas wallet as fee payer (it also creates the wallet's token account when missing).
 *   Every transaction goes through the outbox (lib/chains/broadcast), so a node killed mid-sweep resumes it.
 * - Fees (`fee` ledger transfers to `sys:fees`, id `fee:<sweep id>`): ETH sweeps are paid by the merchant
 *   (the gas is taken from the amount: the wallet receives amount − fee, and the ledger says so); the
 *   platform pays for token sweeps and Solana (`sys:gas` → `sys:fees` in ETH or SOL: top-up and sweep gas,
 *   signature fees). Token-account rent and unused top-up gas stay platform costs (not booked).
 * - Waiting, never failing silently: while the gas wallet cannot pay, a sweep stays `waiting` with
 *   `waiting_reason: gas_wallet_empty` (logged, gas_wallet_low_total counted) and is tried again; an ETH
 *   sweep smaller than its fee waits (`amount_below_fee`) for more deposits to the address.
 */
import { newId } from '../core/ids.ts';
import { isConflict, isDuplicate, type Doc, type WriteOp } from '../store/port.ts';
import { LedgerBatch, accountId, depositKeyOf, settlementId, walletOfAccount, type LedgerTransfer } from '../ledger/index.ts';
import type { ChainTxDoc } from '../chains/broadcast/types.ts';
import { EthereumTxDriver } from '../chains/ethereum/tx-driver.ts';
import { SolanaTxDriver } from '../chains/solana/tx-driver.ts';
import { gasWalletRef } from './gas-wallet.ts';
import { rpcErrorText } from '../chains/clients.ts';
import type { KeyChain, KeyRef } from '../chains/keys.ts';
import { TopupMoveEngine, type MoveEngineDeps, type MoveFields, type MoveStatus } from './move-engine.ts';

export const SWEEPS = 'sweeps';
export const SWEEP_CLAIMS = 'sweep_claims';

export type SweepStatus = MoveStatus;

export interface SweepDoc extends MoveFields {
  session_id: string;
  wallet_id: string;
  deposit_index: number;
  from_address: string;
  to_address: string;
  deposit_keys: string[];
  amount_subunits: string;
  /** SOL: uncounted lamports swept along (they could not stay behind below the rent-exempt minimum) */
  extra_subunits?: string;
  created_at: string;
}

interface SessionLike extends Doc {
  address: string;
  address_index: number;
  chain: string;
  network: string;
  token: string;
}
interface DepositLike extends Doc {
  status: string;
  session_id: string | null;
}
interface WalletLike extends Doc {
  address: string;
}

export type SweeperDeps = MoveEngineDeps;

const TOKEN_OF_ASSET = (asset: string) => asset.split(':')[2]!;

export class Sweeper extends TopupMoveEngine<SweepDoc, SweeperDeps> {
  private timer: NodeJS.Timeout | null = null;
  private discovering: Promise<unknown> | null = null;

  constructor(d: SweeperDeps) {
    super(d, { name: 'sweeps', coll: SWEEPS, topupPurpose: 'sweep_topup', movePurpose: 'sweep', noun: 'sweep', movement: 'sweep' });
  }

  /** discovery and the due sweeps, every pollIntervalMs */
  override start(): void {
    super.start();
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.discovering) return;
      this.discovering = this.discover()
        .catch((e) => this.log().warn('sweep discovery failed:', rpcErrorText(e)))
        .finally(() => {
          this.discovering = null;
        });
    }, this.d.pollIntervalMs);
    this.timer.unref();
  }

  override async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([super.stop(), this.discovering]);
  }

  /** one round now: new sweeps, then the due ones */
  override async scanOnce(): Promise<number> {
    await this.discover();
    return super.scanOnce();
  }

  /**
   * Finds pending on-chain settlements not yet taken by a sweep and creates one sweep per session and
   * asset. Returns the sweeps created.
   */
  async discover(page = 500): Promise<SweepDoc[]> {
    const groups = new Map<string, LedgerTransfer[]>();
    // every pending settlement, a page at a time (claimed ones stay pending until their sweep lands)
    for (let after = ''; ;) {
      const batch = await this.d.store.find<LedgerTransfer>(
        'ledger_transfers',
        { status: 'pending', kind: 'settlement', ...(after ? { id: { $gt: after } } : {}) },
        { limit: page },
      );
      const pending = batch.filter((t) => !t.simulated && t.session_id && t.id.startsWith('set:'));
      // one read for the claims of a hundred deposits
      const claimed = new Set<string>();
      for (let i = 0; i < pending.length; i += 100) {
        const ids = pending.slice(i, i + 100).map((t) => t.id.slice(4));
        for (const c of await this.d.store.find(SWEEP_CLAIMS, { id: { $in: ids } })) claimed.add(c.id);
      }
      for (const t of pending) {
        const [chain, network] = t.asset.split(':');
        if (!this.d.driver(chain!, network!)) continue; // no RPC: nothing can be swept
        if (claimed.has(t.id.slice(4))) continue;
        const k = `${t.session_id}|${t.asset}|${t.credit_account}`;
        groups.set(k, [...(groups.get(k) ?? []), t]);
      }
      if (batch.length < page) break;
      after = batch[batch.length - 1]!.id;
    }
    const out: SweepDoc[] = [];
    for (const ts of groups.values()) {
      const s = await this.create(ts).catch((e) => {
        if (isDuplicate(e) || isConflict(e)) return null; // another node took these deposits first
        throw e;
      });
      if (s) out.push(s);
    }
    return out;
  }

  private async create(ts: LedgerTransfer[]): Promise<SweepDoc | null> {
    const first = ts[0]!;
    const session = await this.d.store.get<SessionLike>('payment_sessions', first.session_id!);
    const walletId = walletOfAccount(first.credit_account);
    const wallet = walletId ? await this.d.store.get<WalletLike>('wallets', walletId) : null;
    if (!session || !wallet) return null;
    // only deposits still counted (a reverted one is being taken back by the ledger)
    const keys: string[] = [];
    let amount = 0n;
    for (const t of ts) {
      const key = t.id.slice(4);
      // a deposit credited again after a reorg settles as `set:<deposit key>#<generation>`
      const dep = await this.d.store.get<DepositLike>('deposits', depositKeyOf(t.id));
      if (!dep || dep.status !== 'credited') continue;
      keys.push(key);
      amount += BigInt(t.amount);
    }
    if (!keys.length) return null;
    const [chain, network] = first.asset.split(':') as [KeyChain, string];
    const at = this.now().toISOString();
    const doc: SweepDoc = {
      id: newId('swp'),
      session_id: session.id,
      chain,
      network,
      token: TOKEN_OF_ASSET(first.asset),
      asset: first.asset,
      wallet_id: wallet.id,
      deposit_index: session.address_index,
      from_address: session.address,
      to_address: wallet.address,
      deposit_keys: keys,
      amount_subunits: amount.toString(),
      status: 'waiting',
      waiting_reason: null,
      attempt: 0,
      topup_tx: null,
      move_tx: null,
      gas_limit: null,
      gas_price: null,
      fee_subunits: null,
      tx_hash: null,
      next_check_at: at,
      created_at: at,
      updated_at: at,
      completed_at: null,
    };
    await this.d.store.write([
      { op: 'insert', coll: SWEEPS, doc },
      ...keys.map((k): WriteOp => ({ op: 'insert', coll: SWEEP_CLAIMS, doc: { id: k, sweep_id: doc.id, created_at: at } })),
    ]);
    return { ...doc, version: 1 };
  }

  private depositRef(s: SweepDoc): KeyRef {
    return { role: 'deposit', chain: s.chain, index: s.deposit_index };
  }

  protected txId(s: SweepDoc, stage: 'topup' | 'move'): string {
    return stage === 'topup' ? `sweep:${s.id}:topup:${s.attempt}` : `sweep:${s.id}:${s.attempt}`;
  }

  protected async onWaiting(s: SweepDoc): Promise<void> {
    if (s.chain === 'ethereum') return s.token === 'ETH' ? this.sweepEth(s) : this.sweepErc20(s);
    if (!(await this.solanaGasCovers(s))) return this.wait(s, 'gas_wallet_empty');
    return s.token === 'SOL' ? this.sweepSol(s) : this.sweepSpl(s);
  }

  /** ETH pays its own gas: the wallet receives amount − fee (waits while the amount is below the fee) */
  private async sweepEth(s: SweepDoc): Promise<void> {
    const driver = this.d.driver(s.chain, s.network);
    if (!(driver instanceof EthereumTxDriver)) throw new Error(`no Ethereum driver for ${s.network}`);
    const gasPrice = await driver.gasPrice();
    if (21_000n * gasPrice >= BigInt(s.amount_subunits)) return this.wait(s, 'amount_below_fee');
    return this.move(s, {
      chain: 'ethereum',
      kind: 'native',
      from: this.depositRef(s),
      to: s.to_address,
      value: s.amount_subunits,
      deduct_fee: true,
      gas_price: gasPrice.toString(),
    });
  }

  /** USDC on Ethereum: a gas top-up of the deposit address first, the sweep pinned to that gas */
  private sweepErc20(s: SweepDoc): Promise<void> {
    const token = this.d.config.chains.ethereum[s.network as 'testnet' | 'mainnet'].usdcToken;
    return this.topupThenMove(
      s,
      { chain: 'ethereum', kind: 'erc20', from: this.depositRef(s), token, to: s.to_address, amount: s.amount_subunits },
      s.from_address,
    );
  }

  private async sweepSol(s: SweepDoc): Promise<void> {
    const driver = this.d.driver(s.chain, s.network);
    if (!(driver instanceof SolanaTxDriver)) throw new Error(`no Solana driver for ${s.network}`);
    // lamports the address holds beyond the counted deposits (an uncounted dust transfer) that would stay
    // below the rent-exempt minimum make Solana refuse the sweep: they go along, booked to the wallet
    const held = await driver.lamports(s.from_address);
    const counted = BigInt(s.amount_subunits);
    if (held < counted) return this.wait(s, 'deposit_not_on_chain');
    const left = held - counted;
    const extra = left > 0n && left < (await driver.rentExemptMinimum()) ? left : 0n;
    if (extra !== (s.extra_subunits ? BigInt(s.extra_subunits) : 0n)) s = { ...s, extra_subunits: extra.toString() };
    return this.move(s, {
      chain: 'solana',
      kind: 'native',
      from: this.depositRef(s),
      to: s.to_address,
      lamports: (counted + extra).toString(),
      fee_payer: gasWalletRef(s.chain, s.network),
    });
  }

  private sweepSpl(s: SweepDoc): Promise<void> {
    const mint = this.d.config.chains.solana[s.network as 'testnet' | 'mainnet'].usdcToken;
    const decimals = this.d.config.rails.find((r) => r.chain === 'solana' && r.token === s.token)?.decimals ?? 6;
    return this.move(s, {
      chain: 'solana',
      kind: 'spl',
      from: this.depositRef(s),
      mint,
      decimals,
      to: s.to_address,
      amount: s.amount_subunits,
      fee_payer: gasWalletRef(s.chain, s.network),
    });
  }

  protected payer(s: SweepDoc): string {
    return s.from_address;
  }

  protected refs(s: SweepDoc) {
    return { session_id: s.session_id };
  }

  /**
   * An ETH sweep pays its gas out of the swept ETH (the wallet received amount − fee): that fee is the
   * merchant's, so it is charged to the wallet instead of the platform's gas (bookCost).
   */
  protected override async bookCost(s: SweepDoc, tx: ChainTxDoc, b: LedgerBatch, stage: 'topup' | 'move'): Promise<void> {
    if (!(s.token === 'ETH' && stage === 'move')) return super.bookCost(s, tx, b, stage);
    const fee = BigInt(tx.fee_subunits ?? '0');
    if (fee <= 0n || tx.status !== 'confirmed') return;
    const native = this.native(s);
    await b.transfer({
      id: `fee:${tx.id}`,
      kind: 'fee',
      asset: native,
      amount: fee,
      debit_account: accountId(s.wallet_id, native),
      credit_account: accountId('sys:fees', native),
      session_id: s.session_id,
      tx_hash: tx.tx_hash,
    });
  }

  /** confirmed → the deposits' settlements posted (now available) and dust booked */
  protected override async bookMove(s: SweepDoc, tx: ChainTxDoc, b: LedgerBatch): Promise<void> {
    if (tx.status !== 'confirmed') return;
    for (const key of s.deposit_keys) {
      const t = await b.transferDoc(settlementId(key));
      if (t?.status === 'pending') await b.post(t.id); // keeps the deposit's tx hash; the sweep's is on the fee and the sweep
    }
    if (s.extra_subunits && s.extra_subunits !== '0') {
      // uncounted lamports that had to go along (see sweepSol): the wallet's address got them, so does its ledger
      await b.transfer({
        id: `dust:${s.id}`,
        kind: 'deposit',
        asset: s.asset,
        amount: s.extra_subunits,
        debit_account: accountId('sys:chain', s.asset),
        credit_account: accountId(s.wallet_id, s.asset),
        tx_hash: tx.tx_hash,
      });
    }
  }
}
