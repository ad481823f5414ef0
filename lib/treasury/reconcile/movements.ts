/**
 * Check 1 (per movement) and check 3's per-movement half (platform money), incremental over final
 * outbox rows (`chain_txs`: payouts, refunds, sweeps, custody moves, their gas top-ups, x402 settlements, drips):
 *
 * - every confirmed row's transaction is on chain, succeeded, is its own (the `recon_txs` insert: no two
 *   rows share a hash or signature) and did exactly what the row meant: from −amount, to +amount of its
 *   asset, the fee on its payer and nothing else to the platform's addresses (effects.ts); the fee the row
 *   books is the fee the chain charged;
 * - no attempt of a failed row succeeded on chain;
 * - once a movement is over (its payout, refund, sweep, custody move or redemption final), what the gas wallet
 *   spent on all its transactions equals what the ledger books against `sys:gas` for them (linked by
 *   transaction hash): rent, top-up value and fees nobody booked show here; and no platform money
 *   (a `sys:` account other than the chain, payouts and simulation) ended in a merchant wallet's account
 *   net of what went back (gas farming shows here).
 *
 * Each row is read from the chain once (Ethereum: the transaction and its receipt; Solana: one
 * getTransaction) and its outcome stored; a run reads only rows final since the last cursor.
 */
import type { Doc, Filter } from '../../store/port.ts';
import { isDuplicate } from '../../store/port.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../chains/broadcast/types.ts';
import { TRANSFERS, type LedgerTransfer } from '../../ledger/index.ts';
import { NATIVE, compareEffect, deltaOf, expectedEffect, type ChallengeTerms, type TxEffect } from './effects.ts';
import type { Drift } from './drift.ts';
import { intentAmount, isPlatformAccount, walletOfOnChainAccount } from './intent.ts';
import type { NetworkView } from './network.ts';
import {
  RECON_GROUPS,
  RECON_ROWS,
  RECON_TXS,
  addToState,
  readState,
  writeRecord,
  writeState,
  type GasStateDoc,
  type ReconGroupDoc,
  type ReconRowDoc,
} from './records.ts';

/** final rows may be written with a clock a little behind: the cursor looks back this far */
const CURSOR_LOOKBACK_MS = 10 * 60_000;
const PAGE = 200;
const PARALLEL = 8;

/** which movement a row belongs to, and the record whose status says it is over */
const FAMILIES: Record<string, { coll: string; over: string[] } | null> = {
  payout: { coll: 'payouts', over: ['completed', 'failed'] },
  payout_topup: { coll: 'payouts', over: ['completed', 'failed'] },
  refund: { coll: 'refunds', over: ['completed', 'failed'] },
  sweep: { coll: 'sweeps', over: ['completed', 'failed'] },
  sweep_topup: { coll: 'sweeps', over: ['completed', 'failed'] },
  custody: { coll: 'custody_moves', over: ['completed', 'failed'] },
  custody_topup: { coll: 'custody_moves', over: ['completed', 'failed'] },
  x402: { coll: 'x402_redemptions', over: ['settled', 'failed'] },
  faucet: null,
};

interface MovementDeps {
  view: NetworkView;
  now(): Date;
}

export interface MovementResult {
  rows: number;
  groups: number;
  /** drifts found in this run (new) */
  drifts: Drift[];
  /** the addresses the rows checked moved money between */
  touched: Set<string>;
}

export class MovementCheck {
  private readonly d: MovementDeps;

  constructor(d: MovementDeps) {
    this.d = d;
  }

  private get v() {
    return this.d.view;
  }

  private base(row: Pick<ChainTxDoc, 'id'>, code: Drift['code']): Pick<Drift, 'check' | 'code' | 'chain' | 'network' | 'row'> {
    return { check: 'movement', code, chain: this.v.chain, network: this.v.network, row: row.id };
  }

  /** reads the final rows not checked yet (up to `limit`) and checks them, then the movements now over */
  async run(limit = Number.POSITIVE_INFINITY): Promise<MovementResult> {
    const { store } = this.v;
    const cursorId = `movements:${this.v.key}`;
    const cursor = await readState<Doc & { final_at: string }>(store, cursorId);
    const since = cursor ? new Date(Date.parse(cursor.final_at) - CURSOR_LOOKBACK_MS).toISOString() : '';
    const out: MovementResult = { rows: 0, groups: 0, drifts: [], touched: new Set() };
    const refs = new Set<string>();
    let newest = cursor?.final_at ?? '';
    let after = since;
    let afterId = '';
    while (out.rows < limit) {
      const filter: Filter = {
        chain: this.v.chain,
        network: this.v.network,
        status: { $in: ['confirmed', 'failed'] },
        final_at: after ? { $gte: after } : { $exists: true },
      };
      const page = (await store.find<ChainTxDoc>(CHAIN_TXS, filter, { sort: 'final_at', limit: PAGE })).filter(
        (r) => r.final_at! > after || (r.final_at === after && r.id > afterId),
      );
      if (page.length === 0) break;
      const done = new Set((await store.find<ReconRowDoc>(RECON_ROWS, { id: { $in: page.map((r) => r.id) } })).map((r) => r.id));
      const todo: ChainTxDoc[] = [];
      for (const row of page) {
        if (out.rows + todo.length >= limit) break;
        after = row.final_at!;
        afterId = row.id;
        if (row.final_at! > newest) newest = row.final_at!;
        if (!done.has(row.id)) todo.push(row);
      }
      // a few rows at a time: their chain reads go out as one JSON-RPC batch
      for (let i = 0; i < todo.length; i += PARALLEL) {
        const part = todo.slice(i, i + PARALLEL);
        const found = await Promise.all(part.map((row) => this.checkRow(row)));
        part.forEach((row, k) => {
          out.rows++;
          out.drifts.push(...found[k]!);
          refs.add(row.ref ?? row.id);
          out.touched.add(row.from_address).add(row.to_address);
        });
      }
      if (page.length < PAGE && out.rows < limit) break;
    }
    if (newest && newest !== cursor?.final_at)
      await writeState(store, cursor, { id: cursorId, final_at: newest, updated_at: this.d.now().toISOString() });
    const g = await this.checkGroups(refs);
    out.groups = g.checked;
    out.drifts.push(...g.drifts);
    return out;
  }

  /** the outcome of one final row, stored once (a second runner's insert loses and changes nothing) */
  async checkRow(row: ChainTxDoc): Promise<Drift[]> {
    const { drifts, doc, landed, gasDelta } = await this.evaluate(row);
    try {
      await this.v.store.write([{ op: 'insert', coll: RECON_ROWS, doc }]);
    } catch (e) {
      if (isDuplicate(e)) return []; // another runner checked it
      throw e;
    }
    if (row.purpose === 'faucet' && landed) await this.countDrip(landed, gasDelta);
    return drifts;
  }

  /**
   * The rows and movements on record with drifts, looked at again (the oldest looked-at first, at most
   * `limit` rows): a drift whose cause was fixed (the node caught up, a missing booking was made) is no
   * longer found, and its record says so. The rows read again and the rows of the movements checked again
   * are what this run examined (lib/treasury/reconcile/lifecycle.ts).
   */
  async recheck(limit = Number.POSITIVE_INFINITY): Promise<{ drifts: Drift[]; rows: Set<string>; groupRows: Set<string> }> {
    const { store } = this.v;
    const out = { drifts: [] as Drift[], rows: new Set<string>(), groupRows: new Set<string>() };
    const scope = { status: 'drift', chain: this.v.chain, network: this.v.network };
    const onRecord = (await store.find<ReconRowDoc>(RECON_ROWS, scope))
      .filter((r) => r.purpose !== 'outflow')
      .sort((a, b) => (a.checked_at < b.checked_at ? -1 : a.checked_at > b.checked_at ? 1 : 0))
      .slice(0, limit);
    for (let i = 0; i < onRecord.length; i += PARALLEL) {
      await Promise.all(
        onRecord.slice(i, i + PARALLEL).map(async (prev) => {
          const row = await store.get<ChainTxDoc>(CHAIN_TXS, prev.id);
          if (!row) return;
          const { drifts, doc } = await this.evaluate(row);
          // the same outcome is written too: checked_at moves on, so a bounded tick takes the next ones
          if (!(await writeRecord(store, RECON_ROWS, prev, { ...doc, id: prev.id }))) return;
          out.rows.add(prev.id);
          out.drifts.push(...drifts);
        }),
      );
    }
    for (const g of await store.find<ReconGroupDoc>(RECON_GROUPS, scope)) {
      const drifts = await this.checkGroup(g.ref, true);
      if (!drifts) continue;
      for (const r of g.rows) out.groupRows.add(r);
      out.drifts.push(...drifts);
    }
    return out;
  }

  /** one final row against the chain: its drifts and the record that says so (not written) */
  private async evaluate(row: ChainTxDoc): Promise<{ drifts: Drift[]; doc: ReconRowDoc; landed: TxEffect | null; gasDelta: bigint }> {
    const drifts: Drift[] = [];
    let landed: TxEffect | null;
    if (row.status === 'confirmed') {
      landed = await this.effect(row.tx_hash);
      if (!landed) {
        drifts.push({
          ...this.base(row, 'missing_on_chain'),
          address: row.from_address,
          asset: null,
          difference: null,
          message: `the books say ${row.id} confirmed with ${row.tx_hash}, which the node does not know`,
        });
      } else if (!landed.ok) {
        drifts.push({
          ...this.base(row, 'failed_on_chain'),
          address: row.from_address,
          asset: null,
          difference: null,
          message: `the books say ${row.id} confirmed, but ${row.tx_hash} failed on chain at ${landed.block}`,
        });
      } else {
        drifts.push(...(await this.compareIntent(row, landed)));
        drifts.push(...(await this.claim(row, landed.hash)));
      }
    } else {
      landed = await this.failedLanding(row, drifts);
    }
    const gasDelta = landed ? deltaOf(landed, this.v.gas, NATIVE) : 0n;
    const doc: ReconRowDoc = {
      id: row.id,
      chain: row.chain,
      network: row.network,
      purpose: row.purpose,
      ref: row.ref,
      status: drifts.length ? 'drift' : 'ok',
      hash: landed?.hash ?? null,
      block: landed?.block ?? null,
      gas_delta: gasDelta.toString(),
      drifts,
      checked_at: this.d.now().toISOString(),
    };
    return { drifts, doc, landed, gasDelta };
  }

  private effect(hash: string): Promise<TxEffect | null> {
    return this.v.eth ? this.v.eth.effect(hash) : this.v.sol!.effect(hash);
  }

  private async compareIntent(row: ChainTxDoc, landed: TxEffect): Promise<Drift[]> {
    const out: Drift[] = [];
    let challenge: ChallengeTerms | null = null;
    if (row.intent.kind === 'cosign' && row.ref) challenge = await this.v.store.get<ChallengeTerms & Doc>('x402_challenges', row.ref);
    const exp = expectedEffect(row, (ref) => this.v.address(this.v.keys.address(ref)), challenge);
    if (!exp) {
      out.push({
        ...this.base(row, 'intent_mismatch'),
        address: row.from_address,
        asset: null,
        difference: null,
        message: `${row.id}: the row's intent cannot be decoded (an unknown call or a settlement without its challenge)`,
      });
      return out;
    }
    const touched = [...landed.deltas.keys()].map((k) => k.slice(0, k.indexOf('|')));
    const mine = await this.v.controlled([...touched, this.v.gas]);
    const mismatches = compareEffect(exp, landed, (a) => mine.has(a));
    for (const m of mismatches) {
      const asset = this.v.ledgerAsset(m.asset);
      out.push({
        ...this.base(row, 'intent_mismatch'),
        address: m.address,
        asset: asset?.ledger ?? m.asset,
        difference: (m.actual - m.expected).toString(),
        wallet_id: mine.get(m.address)?.wallet_id ?? null,
        merchant_id: mine.get(m.address)?.merchant_id ?? null,
        message: `${row.id} meant ${exp.summary}; on chain ${landed.hash} changed ${m.address} by ${this.v.amount(m.actual, m.asset)}, not ${m.expected}`,
      });
    }
    if (row.fee_subunits !== null && BigInt(row.fee_subunits) !== landed.fee) {
      out.push({
        ...this.base(row, 'fee_mismatch'),
        address: landed.feePayer,
        asset: this.v.native.ledger,
        difference: (BigInt(row.fee_subunits) - landed.fee).toString(),
        message: `${row.id} books a fee of ${row.fee_subunits}; the chain charged ${landed.fee} for ${landed.hash}`,
      });
    }
    return out;
  }

  /** the uniqueness of the transaction: a second row naming it is a drift that names both */
  private async claim(row: ChainTxDoc, hash: string): Promise<Drift[]> {
    const id = `${this.v.key}:${hash}`;
    try {
      await this.v.store.write([{ op: 'insert', coll: RECON_TXS, doc: { id, row_id: row.id, created_at: this.d.now().toISOString() } }]);
      return [];
    } catch (e) {
      if (!isDuplicate(e)) throw e;
    }
    const other = await this.v.store.get<Doc & { row_id: string }>(RECON_TXS, id);
    if (!other || other.row_id === row.id) return [];
    const amount = intentAmount(row);
    return [
      {
        ...this.base(row, 'shared_transaction'),
        address: row.to_address,
        asset: amount ? (this.v.ledgerAsset(amount.asset)?.ledger ?? amount.asset) : null,
        difference: amount ? (-amount.value).toString() : null,
        message: `${row.id} and ${other.row_id} name the same transaction ${hash}: one movement happened on chain for two rows${
          amount ? `, so ${row.to_address} received ${amount.value} less than the books say` : ''
        }`,
      },
    ];
  }

  /** a failed row: none of its attempts may have succeeded; the one that landed (and paid a fee), if any */
  private async failedLanding(row: ChainTxDoc, drifts: Drift[]): Promise<TxEffect | null> {
    const hashes = [...new Set(row.attempts.map((a) => a.hash))];
    let landed: TxEffect | null = null;
    if (this.v.eth) {
      for (const h of hashes) {
        const r = await this.v.eth.landed(h);
        if (!r) continue;
        if (r.ok) drifts.push(this.landedDrift(row, h));
        landed = await this.v.eth.effect(h);
      }
    } else {
      const st = await this.v.sol!.statuses(hashes);
      for (let i = 0; i < hashes.length; i++) {
        const s = st[i];
        if (!s) continue;
        if (s.ok) drifts.push(this.landedDrift(row, hashes[i]!));
        landed = await this.v.sol!.effect(hashes[i]!);
      }
    }
    if (landed?.ok) await this.claim(row, landed.hash).then((d) => drifts.push(...d));
    return landed;
  }

  private landedDrift(row: ChainTxDoc, hash: string): Drift {
    const amount = intentAmount(row);
    return {
      ...this.base(row, 'failed_but_landed'),
      address: row.from_address,
      asset: amount ? (this.v.ledgerAsset(amount.asset)?.ledger ?? amount.asset) : null,
      difference: amount ? (-amount.value).toString() : null,
      message: `the books say ${row.id} failed, but its transaction ${hash} succeeded on chain`,
    };
  }

  /** what a drip cost the gas wallet beyond what the ledger books for it counts as booked by its outbox row */
  private async countDrip(landed: TxEffect, gasDelta: bigint): Promise<void> {
    const gasAccount = `acc:sys:gas:${this.v.native.ledger}`;
    let booked = 0n;
    for (const t of await this.v.store.find<LedgerTransfer>(TRANSFERS, { tx_hash: landed.hash })) {
      if (t.status !== 'posted') continue;
      if (t.debit_account === gasAccount) booked += BigInt(t.amount);
      if (t.credit_account === gasAccount) booked -= BigInt(t.amount);
    }
    await addToState<GasStateDoc>(this.v.store, `gas:${this.v.key}`, (cur) =>
      landed.block > cur.height
        ? { ...cur, faucet: (BigInt(cur.faucet) + gasDelta + booked).toString(), updated_at: this.d.now().toISOString() }
        : null,
    );
  }

  /**
   * The movements (groups of rows by ref) that are over and not yet checked: the ones named, and the
   * ones still open from earlier runs.
   */
  async checkGroups(refs: Set<string>): Promise<{ checked: number; drifts: Drift[] }> {
    const { store } = this.v;
    for (const g of await store.find<ReconGroupDoc>(RECON_GROUPS, { status: 'open', chain: this.v.chain, network: this.v.network }))
      refs.add(g.ref);
    const out = { checked: 0, drifts: [] as Drift[] };
    for (const ref of refs) {
      const r = await this.checkGroup(ref);
      if (r) {
        out.checked++;
        out.drifts.push(...r);
      }
    }
    return out;
  }

  private async over(ref: string, rows: ChainTxDoc[]): Promise<boolean> {
    if (rows.some((r) => r.status === 'signed' || r.status === 'sent')) return false;
    const family = FAMILIES[rows[0]!.purpose];
    if (family === null) return true;
    if (!family) return rows.every((r) => r.final_at && Date.parse(r.final_at) < this.d.now().getTime() - 60_000);
    const rec = await this.v.store.get<Doc & { status: string }>(family.coll, ref);
    return !!rec && family.over.includes(rec.status);
  }

  /** null while the movement is not over (or not all its rows are checked); `again`: one with drifts on record too */
  private async checkGroup(ref: string, again = false): Promise<Drift[] | null> {
    const { store: s } = this.v;
    const id = `${this.v.key}:${ref}`;
    const prev = await s.get<ReconGroupDoc>(RECON_GROUPS, id);
    if (prev && prev.status !== 'open' && !(again && prev.status === 'drift')) return null;
    const rows = (await s.find<ChainTxDoc>(CHAIN_TXS, { ref })).filter((r) => r.chain === this.v.chain && r.network === this.v.network);
    if (!rows.length) return null;
    const open = async (): Promise<null> => {
      if (!prev) await writeGroup(s, null, this.group(id, ref, rows, 'open', null, null, []));
      return null;
    };
    if (!(await this.over(ref, rows))) return open();
    const checked = await s.find<ReconRowDoc>(RECON_ROWS, { id: { $in: rows.map((r) => r.id) } });
    if (checked.length < rows.length) return open();

    // the transactions of this movement that landed, each once
    const byHash = new Map<string, ReconRowDoc>();
    for (const c of checked) if (c.hash && c.block !== null && !byHash.has(c.hash)) byHash.set(c.hash, c);
    const hashes = [...byHash.keys()];
    const spent = [...byHash.values()].reduce((a, c) => a - BigInt(c.gas_delta), 0n);
    const transfers = hashes.length
      ? (await s.find<LedgerTransfer>(TRANSFERS, { tx_hash: { $in: hashes } })).filter((t) => t.status === 'posted')
      : [];
    const gasAccount = `acc:sys:gas:${this.v.native.ledger}`;
    let booked = 0n;
    // platform money into a wallet's account, less what went back, per wallet and asset
    const gifts = new Map<string, { wallet: string; asset: string; amount: bigint; hash: string | undefined }>();
    for (const t of transfers) {
      const amount = BigInt(t.amount);
      if (t.asset === this.v.native.ledger) {
        if (t.debit_account === gasAccount) booked += amount;
        if (t.credit_account === gasAccount) booked -= amount;
      }
      const into = isPlatformAccount(t.debit_account) ? walletOfOnChainAccount(t.credit_account) : null;
      const back = isPlatformAccount(t.credit_account) ? walletOfOnChainAccount(t.debit_account) : null;
      for (const [wallet, sign] of [
        [into, 1n],
        [back, -1n],
      ] as const) {
        if (!wallet) continue;
        const k = `${wallet}|${t.asset}`;
        const g = gifts.get(k) ?? { wallet, asset: t.asset, amount: 0n, hash: undefined };
        g.amount += sign * amount;
        if (sign > 0n) g.hash ??= t.tx_hash;
        gifts.set(k, g);
      }
    }
    const drifts: Drift[] = [];
    const rowIds = rows.map((r) => r.id).sort();
    const platformRow = (hash?: string) => (hash ? byHash.get(hash)?.id : undefined) ?? rowIds[0]!;
    const faucet = rows[0]!.purpose === 'faucet';
    if (!faucet && spent !== booked) {
      const heaviest = [...byHash.values()].sort((a, b) => Number(BigInt(a.gas_delta) - BigInt(b.gas_delta)))[0];
      drifts.push({
        check: 'platform',
        code: spent > booked ? 'unbooked_platform_cost' : 'overbooked_platform_cost',
        chain: this.v.chain,
        network: this.v.network,
        row: heaviest?.id ?? rowIds[0]!,
        address: this.v.gas,
        asset: this.v.native.ledger,
        difference: (booked - spent).toString(),
        message:
          spent > booked
            ? `the gas wallet spent ${this.v.amount(spent, NATIVE)} on ${rowIds.join(', ')}; the ledger books ${booked}: ${spent - booked} unbooked (rent, top-up value or fees nobody booked)`
            : `the ledger books ${this.v.amount(booked, NATIVE)} of gas-wallet spend on ${rowIds.join(', ')}; the chain shows ${spent}: ${booked - spent} booked for nothing`,
      });
    }
    for (const g of gifts.values()) {
      if (g.amount <= 0n) continue;
      const w = await s.get<Doc & { address: string; merchant_id: string }>('wallets', g.wallet);
      drifts.push({
        check: 'platform',
        code: 'platform_money_to_merchant',
        chain: this.v.chain,
        network: this.v.network,
        row: platformRow(g.hash),
        address: w ? this.v.address(w.address) : null,
        asset: g.asset,
        difference: (-g.amount).toString(),
        wallet_id: g.wallet,
        merchant_id: w?.merchant_id ?? null,
        message: `${this.v.amount(g.amount, this.v.assets.find((a) => a.ledger === g.asset)?.chainAsset ?? NATIVE)} of platform money booked into wallet ${g.wallet}'s balance by ${rowIds.join(', ')} and never taken back: the merchant can withdraw it`,
      });
    }
    if (!(await writeGroup(s, prev, this.group(id, ref, rows, drifts.length ? 'drift' : 'ok', spent, booked, drifts)))) return null;
    return drifts;
  }

  private group(
    id: string,
    ref: string,
    rows: ChainTxDoc[],
    status: ReconGroupDoc['status'],
    spent: bigint | null,
    booked: bigint | null,
    drifts: Drift[],
  ): ReconGroupDoc {
    return {
      id,
      chain: this.v.chain,
      network: this.v.network,
      ref,
      status,
      rows: rows.map((r) => r.id).sort(),
      spent: spent === null ? null : spent.toString(),
      booked: booked === null ? null : booked.toString(),
      drifts,
      updated_at: this.d.now().toISOString(),
    };
  }
}

const writeGroup = (s: NetworkView['store'], prev: ReconGroupDoc | null, next: ReconGroupDoc) => writeRecord(s, RECON_GROUPS, prev, next);
