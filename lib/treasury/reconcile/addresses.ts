/**
 * Check 2 (per address): every address the platform controls holds on chain what the ledger says it
 * holds, per asset, at one stated block (Ethereum: balances read at that block tag) or slot (Solana: the
 * slot the node answered the balances at).
 *
 * What the ledger says an address holds:
 * - a wallet: the posted balances of the accounts located at it: the wallet's own (`acc:<wallet>:…`; not
 *   the sandbox's simulated sub-account, money with no chain) and the platform's money parked there
 *   (`sys:<name>@<address>`, e.g. a gas top-up not burnt yet), which is never below zero (a drift of its
 *   own: the address's own money paid a platform cost, though the total matches);
 * - a session's deposit address: the settlements still pending there (deposits credited, not yet swept)
 *   and the platform's money parked there;
 *   a deposit address may hold more (an orphan, a deposit not counted yet, a top-up's leftover gas), so
 *   only less is a drift, more is listed;
 * - a gas wallet: its calibration (what it held that no booking explains when reconciliation first met
 *   it) + the ledger's `sys:gas` balance + drips + funding found on chain since. Only less is a drift, and
 *   only once no movement that touched it is still open (bookings of a movement may land on its last row).
 *
 * In flight, exactly: a row not yet final (or an x402 settlement not yet booked) whose transaction landed
 * at or before the stated height adds what the chain shows it did; a custody move not yet landed (its
 * amount already moved in the ledger) adds its amount back to the sender and takes it from the receiver.
 * A custody move or payout that failed for good is not in flight: its difference shows.
 *
 * An address that differs is checked again once from a fresh read (a row may have become final between
 * the reads); only a difference seen twice is a drift.
 */
import type { Doc } from '../../store/port.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../chains/broadcast/types.ts';
import { ACCOUNTS, TRANSFERS, ownerIds, postedBalance, type LedgerAccount, type LedgerTransfer } from '../../ledger/index.ts';
import { CUSTODY_MOVES, IN_FLIGHT, type CustodyMoveDoc } from '../../payouts/custody.ts';
import { NATIVE, addDelta, deltaKey, type TxEffect } from './effects.ts';
import type { Drift } from './drift.ts';
import type { NetworkView } from './network.ts';
import { RECON_GROUPS, readState, writeState, type GasStateDoc } from './records.ts';

export interface AddressTarget {
  kind: 'wallet' | 'deposit' | 'gas';
  address: string;
  wallet_id?: string;
  merchant_id?: string;
  /** deposit addresses: the sessions at it */
  session_ids?: string[];
}

export interface AddressLine {
  kind: AddressTarget['kind'];
  address: string;
  wallet_id: string | null;
  asset: string;
  /** `native`, or the token contract / mint */
  chain_asset: string;
  ledger: string;
  in_flight: string;
  chain: string;
  /** chain − (ledger + in flight) */
  difference: string;
  /** the block or slot the chain figure is from */
  height: number;
}

export interface AddressResult {
  /** the stated height (Ethereum block; Solana: the lowest slot the balances were read at) */
  height: number;
  checked: number;
  lines: AddressLine[];
  drifts: Drift[];
  /** more than the books at a deposit or gas address: listed, not a drift */
  surplus: AddressLine[];
  /** a gas wallet calibrated in this run (its first) */
  calibrated: string[];
  /** a movement of the network is still open: a gas wallet's shortfall was not judged */
  gasOpen: boolean;
}

interface Snapshot {
  ledger: Map<string, bigint>;
  /** platform money parked per `<address>|<ledger asset>` (every parked account of the network) */
  parked: Map<string, { account: string; balance: bigint }>;
  inFlightRows: ChainTxDoc[];
  custody: CustodyMoveDoc[];
  gasState: GasStateDoc | null;
  gasOpen: boolean;
}

export class AddressCheck {
  private readonly v: NetworkView;
  private readonly now: () => Date;

  constructor(v: NetworkView, now: () => Date) {
    this.v = v;
    this.now = now;
  }

  /** the deposit addresses whose sessions still hold pending settlements, with those sessions */
  async depositTargets(): Promise<AddressTarget[]> {
    const sessions = new Set<string>();
    for (const t of await this.pendingSettlements()) if (t.session_id) sessions.add(t.session_id);
    const out = new Map<string, AddressTarget>();
    const ids = [...sessions];
    for (let i = 0; i < ids.length; i += 200) {
      for (const s of await this.v.store.find<Doc & { address: string; merchant_id: string }>('payment_sessions', {
        id: { $in: ids.slice(i, i + 200) },
      })) {
        const a = this.v.address(s.address);
        const t = out.get(a) ?? { kind: 'deposit' as const, address: a, merchant_id: s.merchant_id, session_ids: [] };
        t.session_ids!.push(s.id);
        out.set(a, t);
      }
    }
    return [...out.values()];
  }

  private async pendingSettlements(): Promise<LedgerTransfer[]> {
    const prefix = `${this.v.key}:`;
    return (await this.v.store.find<LedgerTransfer>(TRANSFERS, { status: 'pending', kind: 'settlement' })).filter(
      (t) => t.asset.startsWith(prefix) && !t.simulated,
    );
  }

  async run(targets: AddressTarget[]): Promise<AddressResult> {
    const first = await this.measure(targets);
    const differing = new Set(first.lines.filter((l) => this.isDrift(l, first)).map((l) => l.address));
    const below = await this.parkedBelowZero(first);
    if (!differing.size) return this.withParked(this.result(first, []), below);
    // a second, fresh look at the ones that differ: a drift is a difference seen twice
    const again = await this.measure(targets.filter((t) => differing.has(t.address)));
    const still = again.lines.filter((l) => this.isDrift(l, again));
    const kept = first.lines.filter((l) => !differing.has(l.address)).concat(again.lines);
    return this.withParked(this.result({ ...again, lines: kept }, still), below);
  }

  private withParked(r: AddressResult, below: Drift[]): AddressResult {
    return below.length ? { ...r, drifts: [...r.drifts, ...below] } : r;
  }

  /**
   * Platform money parked at an address (`sys:gas@<address>`) below zero: the address's own money (a
   * merchant's ETH) paid what the platform owed, so the merchant's balance there is not all on chain,
   * although the address's total matches the books. Read from the ledger alone (a posted balance only
   * moves in a movement's final write), named by the last transaction that took from it.
   */
  private async parkedBelowZero(m: Measured): Promise<Drift[]> {
    const out: Drift[] = [];
    for (const [k, p] of m.parked) {
      if (p.balance >= 0n) continue;
      const bar = k.indexOf('|');
      const address = k.slice(0, bar);
      const asset = k.slice(bar + 1);
      const target = m.targets.get(address);
      const last = (await this.v.store.find<LedgerTransfer>(TRANSFERS, { debit_account: p.account, status: 'posted' }))
        .sort((a, b) => (a.created_at < b.created_at ? 1 : -1))
        .find((t) => t.tx_hash);
      const row = last?.tx_hash ? (await this.v.store.findOne<ChainTxDoc>(CHAIN_TXS, { tx_hash: last.tx_hash }))?.id : undefined;
      out.push({
        check: 'platform',
        code: 'parked_below_zero',
        chain: this.v.chain,
        network: this.v.network,
        row: row ?? null,
        address,
        asset,
        difference: p.balance.toString(),
        wallet_id: target?.wallet_id ?? null,
        merchant_id: target?.merchant_id ?? null,
        message: `platform gas parked at ${address} is ${p.balance} (below zero): the address's own money paid ${-p.balance} of the platform's costs${
          row ? ` (last taken by ${row})` : ''
        }, so the balance the books give it is not all on chain`,
      });
    }
    return out;
  }

  private isDrift(l: AddressLine, m: { gasOpen: boolean }): boolean {
    const d = BigInt(l.difference);
    if (l.kind === 'wallet') return d !== 0n;
    if (l.kind === 'deposit') return d < 0n;
    return d < 0n && !m.gasOpen;
  }

  private result(m: Measured, drifting: AddressLine[]): AddressResult {
    const drifts = drifting.map((l): Drift => {
      const target = m.targets.get(l.address);
      return {
        check: 'address',
        code: l.kind === 'wallet' ? 'balance' : l.kind === 'deposit' ? 'deposit_short' : 'gas_wallet_short',
        chain: this.v.chain,
        network: this.v.network,
        row: m.rowsAt.get(deltaKey(l.address, l.chain_asset)) ?? null,
        address: l.address,
        asset: l.asset,
        difference: l.difference,
        wallet_id: l.wallet_id,
        merchant_id: target?.merchant_id ?? null,
        message: `${l.kind} ${l.address} holds ${l.chain} on chain at ${this.v.chain === 'ethereum' ? 'block' : 'slot'} ${l.height}; the books say ${l.ledger}${
          l.in_flight !== '0' ? ` and ${l.in_flight} in flight` : ''
        }${m.notes.get(deltaKey(l.address, l.chain_asset)) ?? ''}`,
      };
    });
    const surplus = m.lines.filter((l) => l.kind !== 'wallet' && BigInt(l.difference) > 0n);
    return { height: m.height, checked: m.lines.length, lines: m.lines, drifts, surplus, calibrated: m.calibrated, gasOpen: m.gasOpen };
  }

  private async measure(targets: AddressTarget[]): Promise<Measured> {
    const snap = await this.snapshot(targets);
    const byAddress = new Map(targets.map((t) => [t.address, t]));
    const owners = targets.map((t) => t.address);
    const assetsOf = (t: AddressTarget) =>
      t.kind === 'gas'
        ? [this.v.native]
        : t.kind === 'deposit'
          ? this.v.assets.filter((a) => snap.ledger.has(`${t.address}|${a.ledger}`))
          : this.v.assets;
    // chain figures at one height
    const chain = new Map<string, bigint>();
    const heights = new Map<string, number>();
    let height: number;
    if (this.v.eth) {
      height = await this.v.eth.head();
      await Promise.all(
        targets.flatMap((t) =>
          assetsOf(t).map(async (a) => {
            chain.set(
              deltaKey(t.address, a.chainAsset),
              await this.v.eth!.balance(t.address, a.chainAsset === NATIVE ? null : a.chainAsset, height),
            );
          }),
        ),
      );
      for (const o of owners) heights.set(o, height);
    } else {
      const r = await this.v.sol!.balances(owners, this.v.tokens());
      height = r.slot;
      for (const [o, b] of r.values) {
        chain.set(deltaKey(o, NATIVE), b.lamports);
        for (const [m, amt] of b.tokens) chain.set(deltaKey(o, m), amt);
      }
      for (const [o, s] of r.slots) heights.set(o, s);
    }
    // in flight: what landed by each address's height and is not booked yet, and custody not landed
    const adjust = new Map<string, bigint>();
    const rowsAt = new Map<string, string>();
    const notes = new Map<string, string>();
    const landed = await this.landed(snap.inFlightRows);
    const at = (address: string) => heights.get(address) ?? height;
    for (const row of snap.inFlightRows) {
      const e = landed.get(row.id);
      if (!e) continue;
      for (const [k, v] of e.deltas) {
        const address = k.slice(0, k.indexOf('|'));
        if (e.block > at(address)) continue; // landed after this address was read
        addDelta(adjust, address, k.slice(k.indexOf('|') + 1), v);
        if (!rowsAt.has(k)) rowsAt.set(k, row.id);
      }
    }
    // a custody move's amount moved in the ledger when its transfer was accepted: the chain's move (when
    // it landed, above) counts against that, and until then the sender still has it
    for (const m of snap.custody) {
      const asset = this.chainAssetOfLedger(m.asset);
      if (!asset) continue;
      const amount = BigInt(m.amount_subunits);
      const from = this.v.address(m.from_address);
      const to = this.v.address(m.to_address);
      addDelta(adjust, from, asset, amount);
      addDelta(adjust, to, asset, -amount);
      rowsAt.set(deltaKey(from, asset), m.move_tx ?? m.id);
      rowsAt.set(deltaKey(to, asset), m.move_tx ?? m.id);
    }
    for (const m of await this.failedCustody()) {
      const asset = this.chainAssetOfLedger(m.asset);
      if (!asset) continue;
      for (const a of [m.from_address, m.to_address]) {
        const k = deltaKey(this.v.address(a), asset);
        notes.set(k, ` (custody move ${m.id} failed for good: its amount never moved on chain)`);
        rowsAt.set(k, m.move_tx ?? m.id);
      }
    }
    const lines: AddressLine[] = [];
    const calibrated: string[] = [];
    for (const t of targets) {
      for (const a of assetsOf(t)) {
        const k = deltaKey(t.address, a.chainAsset);
        let ledger = snap.ledger.get(`${t.address}|${a.ledger}`) ?? 0n;
        const inFlight = adjust.get(k) ?? 0n;
        const onChain = chain.get(k) ?? 0n;
        if (t.kind === 'gas') {
          const state = await this.calibrate(snap.gasState, onChain, ledger + inFlight, heights.get(t.address) ?? height);
          if (!snap.gasState) calibrated.push(t.address);
          ledger += BigInt(state.offset) + BigInt(state.faucet) + BigInt(state.funding);
        }
        lines.push({
          kind: t.kind,
          address: t.address,
          wallet_id: t.wallet_id ?? null,
          asset: a.ledger,
          chain_asset: a.chainAsset,
          ledger: ledger.toString(),
          in_flight: inFlight.toString(),
          chain: onChain.toString(),
          difference: (onChain - ledger - inFlight).toString(),
          height: heights.get(t.address) ?? height,
        });
      }
    }
    return { height, lines, rowsAt, notes, targets: byAddress, calibrated, gasOpen: snap.gasOpen, parked: snap.parked };
  }

  /** the gas wallet's calibration: written on first sight so that what it holds now is its opening balance */
  private async calibrate(state: GasStateDoc | null, onChain: bigint, books: bigint, height: number): Promise<GasStateDoc> {
    if (state) return state;
    const doc: GasStateDoc = {
      id: `gas:${this.v.key}`,
      offset: (onChain - books).toString(),
      height,
      faucet: '0',
      funding: '0',
      updated_at: this.now().toISOString(),
    };
    if (await writeState(this.v.store, null, doc)) return doc;
    return (await readState<GasStateDoc>(this.v.store, doc.id)) ?? doc;
  }

  private chainAssetOfLedger(ledgerAsset: string): string | null {
    return this.v.assets.find((a) => a.ledger === ledgerAsset)?.chainAsset ?? null;
  }

  private async failedCustody(): Promise<CustodyMoveDoc[]> {
    return (await this.v.store.find<CustodyMoveDoc>(CUSTODY_MOVES, { status: 'failed' })).filter(
      (m) => m.chain === this.v.chain && m.network === this.v.network,
    );
  }

  /** the ledger side, read before the chain (a movement that lands in between is in flight, not lost) */
  private async snapshot(targets: AddressTarget[]): Promise<Snapshot> {
    const { store } = this.v;
    const ledger = new Map<string, bigint>();
    const add = (address: string, asset: string, v: bigint) => {
      const k = `${address}|${asset}`;
      ledger.set(k, (ledger.get(k) ?? 0n) + v);
    };
    const prefix = `${this.v.key}:`;
    for (const t of targets) {
      if (t.kind !== 'wallet' || !t.wallet_id) continue;
      for (const a of await store.find<LedgerAccount>(ACCOUNTS, ownerIds(t.wallet_id))) {
        if (a.asset.startsWith(prefix)) add(t.address, a.asset, postedBalance(a));
      }
    }
    // platform money parked at an address: `sys:<name>@<address>`
    const at = new Set(targets.map((t) => t.address));
    const parked = new Map<string, { account: string; balance: bigint }>();
    // every system owner's accounts: `acc:sys:…`
    for (const a of await store.find<LedgerAccount>(ACCOUNTS, ownerIds('sys'))) {
      const i = a.owner.indexOf('@');
      if (i < 0 || !a.asset.startsWith(prefix)) continue;
      let address: string;
      try {
        address = this.v.address(a.owner.slice(i + 1));
      } catch {
        continue;
      }
      parked.set(`${address}|${a.asset}`, { account: a.id, balance: postedBalance(a) });
      if (at.has(address)) add(address, a.asset, postedBalance(a));
    }
    const deposits = targets.filter((t) => t.kind === 'deposit');
    if (deposits.length) {
      const at = new Map<string, string>();
      for (const t of deposits) for (const s of t.session_ids ?? []) at.set(s, t.address);
      for (const tr of await this.pendingSettlements()) {
        const address = tr.session_id ? at.get(tr.session_id) : undefined;
        if (address) add(address, tr.asset, BigInt(tr.amount));
      }
    }
    const gasTarget = targets.find((t) => t.kind === 'gas');
    let gasState: GasStateDoc | null = null;
    let gasOpen = false;
    if (gasTarget) {
      const acc = await store.get<LedgerAccount>(ACCOUNTS, `acc:sys:gas:${this.v.native.ledger}`);
      add(gasTarget.address, this.v.native.ledger, acc ? postedBalance(acc) : 0n);
      gasState = await readState<GasStateDoc>(store, `gas:${this.v.key}`);
      gasOpen = (await store.count(RECON_GROUPS, { status: 'open', chain: this.v.chain, network: this.v.network })) > 0;
    }
    const inFlightRows = (await store.find<ChainTxDoc>(CHAIN_TXS, { status: { $in: ['signed', 'sent'] } })).filter(
      (r) => r.chain === this.v.chain && r.network === this.v.network,
    );
    // x402 settlements are booked by the redeemer after the row is final: until then they are in flight
    for (const r of await store.find<Doc & { chain: string; network: string; chain_tx_id: string | null }>('x402_redemptions', {
      status: 'settling',
    })) {
      if (r.chain !== this.v.chain || r.network !== this.v.network || !r.chain_tx_id) continue;
      const row = await store.get<ChainTxDoc>(CHAIN_TXS, r.chain_tx_id);
      if (row && row.status === 'confirmed') inFlightRows.push(row);
    }
    const custody = (await store.find<CustodyMoveDoc>(CUSTODY_MOVES, { status: { $in: IN_FLIGHT } })).filter(
      (m) => m.chain === this.v.chain && m.network === this.v.network,
    );
    if (!gasOpen && gasTarget) gasOpen = inFlightRows.length > 0;
    return { ledger, parked, inFlightRows, custody, gasState, gasOpen };
  }

  /** the effect of each in-flight row whose transaction landed (any attempt) */
  private async landed(rows: ChainTxDoc[]): Promise<Map<string, TxEffect>> {
    const out = new Map<string, TxEffect>();
    if (this.v.eth) {
      for (const row of rows) {
        for (const a of [...row.attempts].reverse()) {
          if (!(await this.v.eth.landed(a.hash))) continue;
          const e = await this.v.eth.effect(a.hash);
          if (e) out.set(row.id, e);
          break;
        }
      }
      return out;
    }
    const sigs = rows.flatMap((r) => r.attempts.map((a) => ({ row: r.id, sig: a.hash })));
    if (!sigs.length) return out;
    const st = await this.v.sol!.statuses(sigs.map((s) => s.sig));
    for (let i = 0; i < sigs.length; i++) {
      if (!st[i] || out.has(sigs[i]!.row)) continue;
      const e = await this.v.sol!.effect(sigs[i]!.sig);
      if (e) out.set(sigs[i]!.row, e);
    }
    return out;
  }
}

interface Measured {
  height: number;
  lines: AddressLine[];
  rowsAt: Map<string, string>;
  notes: Map<string, string>;
  targets: Map<string, AddressTarget>;
  calibrated: string[];
  gasOpen: boolean;
  parked: Snapshot['parked'];
}
