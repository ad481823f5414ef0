/**
 * The transaction outbox: every outgoing chain transaction (payouts, sweeps, gas top-ups, faucet drips)
 * goes through here, so none is ever sent twice or lost (DESIGN.md: Money movement).
 *
 *   create:  sign (piscina pool) → ONE write: the signed bytes, hash, nonce (Ethereum, allocated per sender
 *            from `chain_nonces`, the allocation in the same write, so a nonce is never reused or skipped)
 *            or blockhash + last valid height (Solana), plus the caller's own ops (e.g. payout → processing)
 *   step:    signed → broadcast → sent; sent → check: pending (re-broadcast the SAME bytes every
 *            BROADCAST_REBROADCAST_MS; Ethereum: after BROADCAST_BUMP_AFTER_MS a replacement with the same
 *            nonce and a higher gas price, unless the intent pins its gas (TxDriver.replaceable); Solana: a
 *            new signature only once the blockhash expired) →
 *            confirmed | failed at the rail's depth, in one write with the purpose's hook ops (ledger
 *            postings, payout status, webhook).
 *
 * Rows are due work (`next_check_at`) claimed by the due-scanner on any node, so a node killed at any
 * point is resumed by another (or itself after a restart): a row signed but not yet broadcast is
 * broadcast, a broadcast one is checked; since only persisted bytes are ever sent, a resumed row can
 * only land once.
 */
import { isConflict, isDuplicate, type WriteOp } from '../../store/port.ts';
import type { MoneyOutMetrics } from '../metrics.ts';
import { rpcErrorText } from '../clients.ts';
import { ChainEngine, type ScanDeps } from '../engine.ts';
import { CHAIN_NONCES, CHAIN_TXS, type ChainTxDoc, type NonceDoc, type TxCheck, type TxDriver, type TxIntent } from './types.ts';

/** The ops a purpose adds to the final write (the doc is already final: status, tx_hash, fee_subunits). */
export type FinalHook = (doc: ChainTxDoc) => Promise<WriteOp[]>;

export interface BroadcasterOptions extends ScanDeps {
  driver(chain: string, network: string): TxDriver | null;
  hooks?: Record<string, FinalHook>;
  rebroadcastMs: number;
  bumpAfterMs: number;
  /** Solana: signatures per transaction before it fails as expired (default 5) */
  maxSolanaAttempts?: number;
  /** how long a claimed row is held before another node may take it (default 30 s) */
  leaseMs?: number;
  metrics?: MoneyOutMetrics;
}

export interface CreateSpec {
  id: string;
  chain: 'ethereum' | 'solana';
  network: string;
  purpose: string;
  ref?: string | null;
  intent: TxIntent;
}

const errText = (e: unknown) => rpcErrorText(e);

/** the final fields of a check that decided the row (null: not decided) */
function outcome(check: TxCheck, doc: ChainTxDoc): Partial<ChainTxDoc> | null {
  if (check.state === 'confirmed')
    return {
      status: 'confirmed',
      tx_hash: check.hash,
      block_number: check.block,
      fee_subunits: check.fee,
      rent_subunits: check.rent ?? null,
      failure_reason: null,
    };
  if (check.state === 'failed')
    return {
      status: 'failed',
      tx_hash: check.hash ?? doc.tx_hash,
      block_number: check.block,
      fee_subunits: check.fee,
      failure_reason: check.reason,
    };
  return null;
}
const isRace = (e: unknown) => isConflict(e) || isDuplicate(e);

export class Broadcaster extends ChainEngine<ChainTxDoc, BroadcasterOptions> {
  private hooks: Record<string, FinalHook>;

  constructor(o: BroadcasterOptions) {
    super(o, {
      name: 'broadcaster',
      coll: CHAIN_TXS,
      dueField: 'next_check_at',
      filter: { status: { $in: ['signed', 'sent'] } },
      leaseMs: o.leaseMs ?? 30_000,
    });
    this.hooks = { ...(o.hooks ?? {}) };
  }

  private get o(): BroadcasterOptions {
    return this.d;
  }

  /** registers the final-write hook of a purpose (payout, sweep, …) */
  hook(purpose: string, fn: FinalHook): void {
    this.hooks[purpose] = fn;
  }

  /**
   * Runs after a row of this purpose became final and committed (e.g. sign the next transaction at once
   * instead of on the next scan). Best effort: correctness never depends on it, the scanners catch up.
   */
  afterFinal(purpose: string, fn: (doc: ChainTxDoc) => Promise<unknown>): void {
    this.after[purpose] = fn;
  }
  private after: Record<string, (doc: ChainTxDoc) => Promise<unknown>> = {};

  private drv(chain: string, network: string): TxDriver {
    const d = this.o.driver(chain, network);
    if (!d) throw new Error(`no RPC configured for ${chain} ${network}`);
    return d;
  }

  private count(doc: Pick<ChainTxDoc, 'chain' | 'network' | 'purpose'>, outcome: string) {
    this.o.metrics?.broadcasts.inc({ chain: doc.chain, network: doc.network, purpose: doc.purpose, outcome });
  }

  /**
   * Signs and persists a transaction, with `extra()`'s ops in the same write (built afresh on every try).
   * Idempotent on spec.id: when the row exists, nothing is signed or written and the row is returned.
   */
  async create(spec: CreateSpec, extra?: () => Promise<WriteOp[]>): Promise<{ doc: ChainTxDoc; created: boolean }> {
    const driver = this.drv(spec.chain, spec.network);
    const { from, to } = driver.addresses(spec.intent);
    for (let attempt = 1; ; attempt++) {
      const existing = await this.o.store.get<ChainTxDoc>(CHAIN_TXS, spec.id);
      if (existing) return { doc: existing, created: false };
      const ops: WriteOp[] = [];
      let nonce: number | null = null;
      // the chain's nonce and the fees do not depend on each other: asked at once (one batch of calls)
      const [chainNonce, fees] = await Promise.all([driver.chainNonce?.(from), driver.fees?.(spec.intent)]);
      if (chainNonce !== undefined) {
        const key = `${spec.chain}:${spec.network}:${from}`;
        const stored = await this.o.store.get<NonceDoc>(CHAIN_NONCES, key);
        // the chain's count covers transactions sent from this address outside the service
        nonce = Math.max(stored?.next ?? 0, chainNonce);
        const next: NonceDoc = { id: key, next: nonce + 1, updated_at: this.now().toISOString() };
        ops.push(
          stored
            ? { op: 'cas', coll: CHAIN_NONCES, doc: next, expected: stored.version! }
            : { op: 'insert', coll: CHAIN_NONCES, doc: next },
        );
      }
      const signed = await driver.sign(spec.intent, nonce, spec.id, fees);
      const at = this.now().toISOString();
      const doc: ChainTxDoc = {
        id: spec.id,
        chain: spec.chain,
        network: spec.network,
        purpose: spec.purpose,
        ref: spec.ref ?? null,
        intent: spec.intent,
        from_address: from,
        to_address: to,
        status: 'signed',
        nonce,
        attempts: [signed],
        tx_hash: signed.hash,
        broadcasts: 0,
        last_broadcast_at: null,
        last_error: null,
        // the creating node sends at once; another node takes over if it does not
        next_check_at: new Date(this.now().getTime() + this.o.pollIntervalMs).toISOString(),
        block_number: null,
        fee_subunits: null,
        failure_reason: null,
        created_at: at,
        updated_at: at,
        final_at: null,
      };
      ops.push({ op: 'insert', coll: CHAIN_TXS, doc });
      if (extra) ops.push(...(await extra()));
      try {
        await this.o.store.write(ops);
        this.count(doc, 'signed');
        return { doc: { ...doc, version: 1 }, created: true };
      } catch (e) {
        // a lost race on the nonce or the row: nothing was broadcast, so signing again is safe
        if (!isRace(e) || attempt >= 20) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * 20));
      }
    }
  }

  /**
   * Runs the next step of a row now (after create, for latency; the scanner does the same later): a signed
   * row's broadcast and its first check (on a fast chain the transaction may already be deep enough), a
   * sent row's check.
   */
  async process(id: string): Promise<ChainTxDoc | null> {
    const doc = await this.o.store.get<ChainTxDoc>(CHAIN_TXS, id);
    return doc && (doc.status === 'signed' || doc.status === 'sent') ? this.step(doc) : doc;
  }

  private async save(doc: ChainTxDoc, changes: Partial<ChainTxDoc>, extra: WriteOp[] = []): Promise<ChainTxDoc | null> {
    const next: ChainTxDoc = { ...doc, ...changes, updated_at: this.now().toISOString() };
    try {
      await this.o.store.write([{ op: 'cas', coll: CHAIN_TXS, doc: next, expected: doc.version! }, ...extra]);
      return { ...next, version: doc.version! + 1 };
    } catch (e) {
      if (isConflict(e) && (e as { coll?: string }).coll === CHAIN_TXS) return null; // another node moved it on
      throw e;
    }
  }

  private dueIn(ms: number): string {
    return new Date(this.now().getTime() + ms).toISOString();
  }

  private async broadcast(doc: ChainTxDoc, raw: string): Promise<{ ok: boolean; error: string | null }> {
    try {
      await this.drv(doc.chain, doc.network).send(raw);
      this.count(doc, doc.broadcasts === 0 ? 'broadcast' : 'rebroadcast');
      return { ok: true, error: null };
    } catch (e) {
      this.count(doc, 'broadcast_error');
      return { ok: false, error: errText(e) };
    }
  }

  /** One transition of a row; returns the row as saved (null when another node changed it first). */
  override async step(doc: ChainTxDoc): Promise<ChainTxDoc | null> {
    const driver = this.drv(doc.chain, doc.network);
    const latest = doc.attempts[doc.attempts.length - 1]!;
    if (doc.status === 'signed') {
      const r = await this.broadcast(doc, latest.raw);
      // after any send the chain decides: a refused re-send of bytes that already landed is normal
      const sent: Partial<ChainTxDoc> = {
        status: 'sent',
        broadcasts: doc.broadcasts + 1,
        last_broadcast_at: this.now().toISOString(),
        last_error: r.error,
        next_check_at: this.dueIn(this.o.pollIntervalMs),
      };
      // checked at once: a transaction already final is written with its send in one write (the bytes were
      // persisted before the send, so a crash before this write only sends them again)
      const check = await driver.check({ ...doc, ...sent }).catch(() => null);
      const final = check && outcome(check, doc);
      return final ? this.finish(doc, { ...sent, ...final }) : this.save(doc, sent);
    }
    if (doc.status !== 'sent') return doc;
    const check = await driver.check(doc);
    if (check.state === 'confirmed' || check.state === 'failed') return this.finish(doc, outcome(check, doc)!);
    if (check.state === 'expired') {
      // a co-signed transaction carries someone else's signature over their blockhash: it cannot be re-signed
      if (doc.attempts.length >= (this.o.maxSolanaAttempts ?? 5) || doc.intent.kind === 'cosign') {
        return this.finish(doc, {
          status: 'failed',
          failure_reason: 'the transaction did not land before its blockhash expired',
          fee_subunits: null,
          block_number: null,
        });
      }
      const next = await driver.resign(doc);
      return this.save(doc, { status: 'signed', attempts: [...doc.attempts, next], tx_hash: next.hash, next_check_at: this.dueIn(0) });
    }
    const now = this.now().getTime();
    const replaceable = driver.replaceable?.(doc) ?? true;
    if (!check.landed && doc.chain === 'ethereum' && replaceable && now - Date.parse(latest.signed_at) >= this.o.bumpAfterMs) {
      // a replacement: same nonce, higher gas price; whichever attempt is mined is the one (never of a
      // pinned transaction, whose payer reserved exactly its gas: it is re-sent unchanged below)
      const next = await driver.resign(doc);
      const saved = await this.save(doc, { attempts: [...doc.attempts, next], tx_hash: next.hash });
      if (!saved) return null;
      const r = await this.broadcast(saved, next.raw);
      return this.save(saved, {
        broadcasts: saved.broadcasts + 1,
        last_broadcast_at: this.now().toISOString(),
        last_error: r.error,
        next_check_at: this.dueIn(this.o.pollIntervalMs),
      });
    }
    if (!check.landed && (!doc.last_broadcast_at || now - Date.parse(doc.last_broadcast_at) >= this.o.rebroadcastMs)) {
      const r = await this.broadcast(doc, latest.raw);
      return this.save(doc, {
        broadcasts: doc.broadcasts + 1,
        last_broadcast_at: this.now().toISOString(),
        last_error: r.error,
        next_check_at: this.dueIn(this.o.pollIntervalMs),
      });
    }
    return this.save(doc, { next_check_at: this.dueIn(this.o.pollIntervalMs) });
  }

  /** the final write: the row's outcome and its purpose's ops together, retried while ledger rows race */
  private async finish(doc: ChainTxDoc, changes: Partial<ChainTxDoc>): Promise<ChainTxDoc | null> {
    let current = doc;
    for (let attempt = 1; ; attempt++) {
      const final: ChainTxDoc = {
        ...current,
        ...changes,
        next_check_at: null,
        final_at: this.now().toISOString(),
        updated_at: this.now().toISOString(),
      };
      const hook = this.hooks[current.purpose];
      const extra = hook ? await hook(final) : [];
      try {
        await this.o.store.write([{ op: 'cas', coll: CHAIN_TXS, doc: final, expected: current.version! }, ...extra]);
        this.count(final, final.status);
        if (final.status === 'failed') this.log().warn(`chain transaction ${final.id} failed: ${final.failure_reason}`);
        const after = this.after[final.purpose];
        if (after) void after(final).catch((e) => this.log().warn(`after ${final.id}:`, errText(e)));
        return { ...final, version: current.version! + 1 };
      } catch (e) {
        if (!isRace(e)) throw e;
        if (isConflict(e) && (e as { coll?: string }).coll === CHAIN_TXS) return null;
        if (attempt >= 20) throw e;
        const again = await this.o.store.get<ChainTxDoc>(CHAIN_TXS, current.id);
        if (!again || again.status !== current.status) return again;
        current = again;
      }
    }
  }
}
