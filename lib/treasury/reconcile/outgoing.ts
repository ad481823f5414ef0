/**
 * Check 2's second half: every transfer out of a platform address found on chain belongs to an outbox
 * row. Incremental from a stored cursor, so each block or signature is read once:
 *
 * - Ethereum, per block range (cursor, head]: every transaction of each block (eth_getBlockByNumber) sent
 *   by a platform address must be one of its outbox row's attempts (found by sender and nonce, then
 *   hash); every Transfer log of the USDC token (eth_getLogs over the range) out of a platform address
 *   must be in a transaction the platform sent. ETH sent to the gas wallet from outside is funding.
 * - Solana, per address (the gas wallet and the wallets; deposit addresses hold money only until their
 *   sweep and are compared by balance): its signatures since its cursor (getSignaturesForAddress); one
 *   that is neither an outbox row's nor a recorded deposit is read (getTransaction): if the address lost
 *   money in it, that is a drift; lamports the gas wallet gained in it are funding.
 *
 * Cost per run: Ethereum one call per block plus one eth_getLogs per range; Solana one call per address
 * plus one per unknown signature. A cap per run bounds it (`maxBlocks`); the cursor resumes there.
 */
import { isDuplicate, type Doc } from '../../store/port.ts';
import { CHAIN_TXS, type ChainTxDoc } from '../../chains/broadcast/types.ts';
import { NATIVE, deltaOf } from './effects.ts';
import type { Drift } from './drift.ts';
import type { Controlled, NetworkView } from './network.ts';
import { RECON_ROWS, addToState, readState, writeState, type GasStateDoc, type ReconRowDoc } from './records.ts';

export interface OutgoingResult {
  /** Ethereum: the last block scanned; Solana: the slot of the newest signature read */
  height: number | null;
  scanned: number;
  drifts: Drift[];
  /** inflows to the gas wallet found (smallest units) */
  funding: string;
}

interface BlockCursor extends Doc {
  block: number;
  updated_at: string;
}
interface SigCursor extends Doc {
  signature: string;
  slot: number;
  updated_at: string;
}

export class OutgoingScan {
  private readonly v: NetworkView;
  private readonly now: () => Date;

  constructor(v: NetworkView, now: () => Date) {
    this.v = v;
    this.now = now;
  }

  /** Solana: the addresses to read this run (Ethereum scans blocks, whoever sent) */
  async run(opts: { maxBlocks?: number; addresses?: string[] } = {}): Promise<OutgoingResult> {
    return this.v.eth ? this.ethereum(opts.maxBlocks ?? 500) : this.solana(opts.addresses ?? [this.v.gas]);
  }

  private outflow(hash: string, address: string, c: Controlled | undefined, asset: string, amount: bigint, where: string): Drift {
    const a = this.v.ledgerAsset(asset);
    return {
      check: 'outgoing',
      code: 'unknown_outflow',
      chain: this.v.chain,
      network: this.v.network,
      row: null,
      address,
      asset: a?.ledger ?? asset,
      difference: (-amount).toString(),
      wallet_id: c?.wallet_id ?? null,
      merchant_id: c?.merchant_id ?? null,
      message: `${this.v.amount(amount, asset)} left ${c?.kind ?? 'platform'} address ${address} in ${hash} (${where}), a transaction that belongs to no outbox row`,
    };
  }

  /** records an outflow once (id outflow:<network>:<hash>); false when it was recorded before */
  private async record(hash: string, block: number, drifts: Drift[]): Promise<boolean> {
    const doc: ReconRowDoc = {
      id: `outflow:${this.v.key}:${hash}`,
      chain: this.v.chain,
      network: this.v.network,
      purpose: 'outflow',
      ref: null,
      status: 'drift',
      hash,
      block,
      gas_delta: '0',
      drifts,
      checked_at: this.now().toISOString(),
    };
    try {
      await this.v.store.write([{ op: 'insert', coll: RECON_ROWS, doc }]);
      return true;
    } catch (e) {
      if (isDuplicate(e)) return false;
      throw e;
    }
  }

  private async fund(amount: bigint, height: number): Promise<void> {
    if (amount <= 0n) return;
    await addToState<GasStateDoc>(this.v.store, `gas:${this.v.key}`, (cur) =>
      height > cur.height ? { ...cur, funding: (BigInt(cur.funding) + amount).toString(), updated_at: this.now().toISOString() } : null,
    );
  }

  private async ethereum(maxBlocks: number): Promise<OutgoingResult> {
    const eth = this.v.eth!;
    const id = `outgoing:${this.v.key}`;
    const cursor = await readState<BlockCursor>(this.v.store, id);
    const head = await eth.head();
    const out: OutgoingResult = { height: cursor?.block ?? head, scanned: 0, drifts: [], funding: '0' };
    // first run: nothing before today is scanned (the gas wallet's calibration covers what came before)
    if (!cursor) {
      await writeState(this.v.store, null, { id, block: head, updated_at: this.now().toISOString() });
      return { ...out, height: head };
    }
    const from = cursor.block + 1;
    const to = Math.min(head, cursor.block + maxBlocks);
    if (to < from) return out;
    const senders = new Map<string, string>(); // tx hash → sender
    let funding = 0n;
    for (let n = from; n <= to; n++) {
      const txs = await eth.block(n);
      out.scanned++;
      for (const t of txs) senders.set(t.hash, t.from);
      const mine = await this.v.controlled(txs.flatMap((t) => (t.to ? [t.from, t.to] : [t.from])));
      for (const t of txs) {
        const c = mine.get(t.from);
        if (c) {
          const row = (await this.v.store.find<ChainTxDoc>(CHAIN_TXS, { from_address: t.from, nonce: t.nonce })).find((r) =>
            r.attempts.some((a) => a.hash.toLowerCase() === t.hash.toLowerCase()),
          );
          if (!row) {
            const drifts = [this.outflow(t.hash, t.from, c, NATIVE, t.value, `block ${n}, nonce ${t.nonce}`)];
            if (await this.record(t.hash, n, drifts)) out.drifts.push(...drifts);
          }
        } else if (t.to === this.v.gas && t.value > 0n) funding += t.value;
      }
    }
    for (const token of this.v.tokens()) {
      const logs = await eth.tokenTransfers(token, from, to);
      const mine = await this.v.controlled(logs.map((l) => l.from));
      for (const l of logs) {
        const c = mine.get(l.from);
        if (!c) continue;
        const sender = senders.get(l.hash);
        if (sender && (await this.v.controlled([sender])).size) continue; // sent by the platform: checked above
        const drifts = [this.outflow(l.hash, l.from, c, token, l.amount, `block ${l.block}, sent by ${sender ?? 'another account'}`)];
        if (await this.record(`${l.hash}:${l.from}`, l.block, drifts)) out.drifts.push(...drifts);
      }
    }
    await this.fund(funding, to);
    out.funding = funding.toString();
    await writeState(this.v.store, cursor, { ...cursor, block: to, updated_at: this.now().toISOString() });
    out.height = to;
    return out;
  }

  private async solana(addresses: string[]): Promise<OutgoingResult> {
    const sol = this.v.sol!;
    const out: OutgoingResult = { height: null, scanned: 0, drifts: [], funding: '0' };
    let funding = 0n;
    const mine = await this.v.controlled(addresses);
    for (const address of addresses) {
      const id = `outgoing:${this.v.key}:${address}`;
      const cursor = await readState<SigCursor>(this.v.store, id);
      const sigs = await sol.signatures(address, cursor?.signature ?? null);
      if (!sigs.length) continue;
      for (const s of [...sigs].reverse()) {
        out.scanned++;
        out.height = Math.max(out.height ?? 0, s.slot);
        if ((await this.v.store.count(CHAIN_TXS, { tx_hash: s.signature })) > 0) continue;
        // a deposit the listener recorded (id solana:<network>:<signature>:<index>)
        const dep = `${this.v.key}:${s.signature}:`;
        if ((await this.v.store.count('deposits', { id: { $gte: dep, $lt: `${dep}~` } })) > 0) continue;
        const e = await sol.effect(s.signature);
        if (!e) continue;
        for (const a of this.v.assets) {
          const d = deltaOf(e, address, a.chainAsset);
          if (d < 0n && !(address === e.feePayer && a.chainAsset === NATIVE && -d === e.fee)) {
            const drifts = [this.outflow(s.signature, address, mine.get(address), a.chainAsset, -d, `slot ${s.slot}`)];
            if (await this.record(`${s.signature}:${address}`, s.slot, drifts)) out.drifts.push(...drifts);
          } else if (d > 0n && address === this.v.gas && a.chainAsset === NATIVE) {
            funding += d;
            await this.fund(d, s.slot);
          }
        }
      }
      const newest = sigs[0]!;
      await writeState(this.v.store, cursor, { id, signature: newest.signature, slot: newest.slot, updated_at: this.now().toISOString() });
    }
    out.funding = funding.toString();
    return out;
  }
}
