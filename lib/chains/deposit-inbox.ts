/**
 * Deposits found on chain: written to the store first (collection `deposits`), then delivered to the
 * session actor from there (DESIGN.md: anything that must not be lost is written to the store first).
 *
 * - Key: <chain>:<network>:<tx>:<index>. Recording a deposit is an insert of that key: a replay (a
 *   restarted listener, another node, an overlapping pass) is a duplicate and changes nothing.
 * - Classification, before anything is delivered: the deposit's token must be the session's token on
 *   the session's network; otherwise it is an `orphan` (wrong_token, wrong_network, unknown_address) that
 *   never moves a session and is listed for operators (`operators.listDeposits`). So is `dust`: less than a
 *   tenth of the rail's min_amount, which keeps spam transfers from growing a session's record.
 * - Delivery: `credit` (status seen → credited) or `revert` (status reverted) to the session actor. The
 *   actor dedups by key, so a redelivery is harmless. A failed delivery is retried by the scanner
 *   (`next_delivery_at`, claimed atomically, any node). After sending, the deliverer marks the document
 *   delivered by compare-and-set; when the document changed meanwhile (a revert racing a credit), it
 *   re-reads it and sends what the document now says, so the last message the actor sees always
 *   matches the store.
 * - Reverts: a deposit whose block left the canonical chain becomes `reverted` and the actor gets
 *   `revert`; if the same transaction is found again on the new chain, the same key is credited again
 *   (the actor counts a key again after its revert).
 *
 * No broker in here: delivery goes through the `send` function the listener service passes in.
 */
import { DuplicateKeyError, isConflict, isDuplicate, type Doc, type Filter, type Store } from '../store/port.ts';
import { retryOnConflict } from '../core/retry.ts';
import { DueScanner } from '../core/due-scanner.ts';
import { conflict } from '../core/errors.ts';
import type { DepositInput, SessionMsg, SessionReply } from '../sessions/payment-session.ts';
import type { WatchedAddress } from './address-book.ts';

export const DEPOSITS = 'deposits';
/** the store decides races between listeners at once: retry without a pause */
const CAS_RETRY = { attempts: 10, maxPauseMs: () => 0 };

export type DepositStatus = 'seen' | 'credited' | 'reverted' | 'orphan';
export const DEPOSIT_STATUSES: DepositStatus[] = ['seen', 'credited', 'reverted', 'orphan'];
export type OrphanReason = 'wrong_token' | 'wrong_network' | 'unknown_address' | 'dust';

/** A deposit as a chain scanner reports it. */
export interface FoundDeposit {
  chain: 'ethereum' | 'solana';
  network: string;
  tx_hash: string;
  /** Ethereum: log index, -1 for the transaction's own ETH value; Solana: the credited account's index */
  index: number;
  /** the watched address that was paid (Solana: the owner of the credited token account) */
  to_address: string;
  from_address: string | null;
  /** Solana: the account whose balance went up (the owner itself for SOL, the token account for SPL) */
  account: string | null;
  /** the rail token this is (USDC, ETH, SOL), or null for a token the service does not settle */
  token: string | null;
  /** ERC-20 contract or SPL mint; null for ETH and SOL */
  token_contract: string | null;
  amount_subunits: string;
  /** Ethereum: the block number; Solana: the slot */
  block_number: number;
  /** Ethereum only */
  block_hash: string | null;
  /** the block's time (ms since epoch), when known */
  block_time_ms: number | null;
  confirmations: number;
}

export interface DepositDoc extends Doc {
  chain: string;
  network: string;
  token: string | null;
  token_contract: string | null;
  tx_hash: string;
  index: number;
  to_address: string;
  from_address: string | null;
  account: string | null;
  amount_subunits: string;
  block_number: number;
  block_hash: string | null;
  block_time: string | null;
  confirmations: number;
  status: DepositStatus;
  orphan_reason: OrphanReason | null;
  /** the session that holds to_address (also for orphans, so operators see where it went); null if none */
  session_id: string | null;
  /** the session has acknowledged the message this status owes it (always true for orphans) */
  delivered: boolean;
  /** when a redelivery is due; null when nothing is owed */
  next_delivery_at: string | null;
  delivery_attempts: number;
  last_error: string | null;
  /** the actor's answer to the last credit: credited, duplicate, late, ignored */
  credit_result: string | null;
  detected_at: string;
  created_at: string;
  updated_at: string;
  credited_at: string | null;
  reverted_at: string | null;
}

export const depositKey = (d: Pick<FoundDeposit, 'chain' | 'network' | 'tx_hash' | 'index'>): string =>
  `${d.chain}:${d.network}:${d.tx_hash}:${d.index}`;

/**
 * The message a deposit record owes its session, built from the record alone. The session actor acts on
 * this, never on the amounts a caller put in a message (see `inboxResolver`).
 */
export function owedMessage(d: DepositDoc): SessionMsg | null {
  const kind = messageFor(d);
  if (kind === 'revert') return { type: 'revert', key: d.id };
  if (kind !== 'credit') return null;
  const deposit: DepositInput = {
    key: d.id,
    tx_hash: d.tx_hash,
    index: d.index,
    amount_subunits: d.amount_subunits,
    token: d.token ?? '',
    confirmations: d.confirmations,
    ...(d.chain === 'ethereum'
      ? { block_number: d.block_number, block_hash: d.block_hash ?? undefined }
      : { block_number: d.block_number }),
    detected_at: d.detected_at,
  };
  return { type: 'credit', deposit };
}

/**
 * For the session actor: replaces a credit or revert message by what the deposit inbox says the session
 * is owed for that key. A message for a deposit that is not in the inbox, belongs to another session or
 * owes nothing changes nothing, so even a node that can send messages cannot invent money.
 */
export function inboxResolver(store: Store) {
  return async (sessionId: string, msg: SessionMsg): Promise<SessionMsg> => {
    if (msg.type !== 'credit' && msg.type !== 'revert') return msg;
    const key = msg.type === 'credit' ? ((msg as { key?: string; deposit?: { key?: string } }).key ?? msg.deposit?.key) : msg.key;
    const record = typeof key === 'string' ? await store.get<DepositDoc>(DEPOSITS, key) : null;
    // a 409, not a 404: a 404 from the actor means "no such session" to the inbox's delivery
    if (!record || record.session_id !== sessionId)
      throw conflict(`deposit ${String(key)} is not in the deposit inbox for session ${sessionId}`);
    const owed = owedMessage(record);
    if (!owed) throw conflict(`deposit ${record.id} owes session ${sessionId} nothing (${record.status})`);
    return owed;
  };
}

/** Which message the session is owed for this document (null: none, an orphan). */
export function messageFor(d: Pick<DepositDoc, 'status' | 'session_id'>): 'credit' | 'revert' | null {
  if (!d.session_id || d.status === 'orphan') return null;
  return d.status === 'reverted' ? 'revert' : 'credit';
}

export function classify(
  found: FoundDeposit,
  target: WatchedAddress | undefined,
  dustBelow = 0n,
): { status: 'seen' | 'orphan'; reason: OrphanReason | null } {
  if (!target) return { status: 'orphan', reason: 'unknown_address' };
  if (target.network !== found.network) return { status: 'orphan', reason: 'wrong_network' };
  if (found.token === null || found.token !== target.token) return { status: 'orphan', reason: 'wrong_token' };
  if (BigInt(found.amount_subunits) < dustBelow) return { status: 'orphan', reason: 'dust' };
  return { status: 'seen', reason: null };
}

export type SendToSession = (sessionId: string, msg: SessionMsg) => Promise<SessionReply>;

export interface DepositInboxOptions {
  send: SendToSession;
  now?: () => Date;
  /** a stored, not yet delivered deposit becomes due for the scanner after this (default 10 s) */
  deliveryGraceMs?: number;
  /** the scanner's claim lease (default 30 s) */
  claimLeaseMs?: number;
  log?: { warn(...args: unknown[]): void };
  /** smallest units below which a deposit of this rail is dust (0n: none) */
  dustBelow?: (network: string, token: string) => bigint;
}

function errorText(e: unknown): string {
  return String((e as Error)?.message ?? e).slice(0, 300);
}

function isNotFound(e: unknown): boolean {
  const x = e as { code?: unknown; type?: unknown };
  return x?.code === 404 && x?.type === 'NOT_FOUND';
}

export class DepositInbox {
  private readonly store: Store;
  private readonly send: SendToSession;
  private readonly now: () => Date;
  private readonly graceMs: number;
  private dustBelow: (network: string, token: string) => bigint;
  private readonly claimLeaseMs: number;
  private readonly log: { warn(...args: unknown[]): void };

  constructor(store: Store, opts: DepositInboxOptions) {
    this.store = store;
    this.send = opts.send;
    this.now = opts.now ?? (() => new Date());
    this.graceMs = opts.deliveryGraceMs ?? 10_000;
    this.dustBelow = opts.dustBelow ?? (() => 0n);
    this.claimLeaseMs = opts.claimLeaseMs ?? 30_000;
    this.log = opts.log ?? console;
  }

  /**
   * Stores a found deposit (insert by key). Returns the document when it now owes the session a message
   * (new, or found again after a revert), null when it was already known or is an orphan already stored.
   */
  async record(found: FoundDeposit, target: WatchedAddress | undefined): Promise<DepositDoc | null> {
    const now = this.now();
    const at = now.toISOString();
    const { status, reason } = classify(found, target, found.token ? this.dustBelow(found.network, found.token) : 0n);
    const blockTime = found.block_time_ms !== null ? new Date(Math.min(found.block_time_ms, now.getTime())).toISOString() : null;
    const doc: DepositDoc = {
      id: depositKey(found),
      chain: found.chain,
      network: found.network,
      token: found.token,
      token_contract: found.token_contract,
      tx_hash: found.tx_hash,
      index: found.index,
      to_address: found.to_address,
      from_address: found.from_address,
      account: found.account,
      amount_subunits: found.amount_subunits,
      block_number: found.block_number,
      block_hash: found.block_hash,
      block_time: blockTime,
      confirmations: found.confirmations,
      status,
      orphan_reason: reason,
      session_id: target?.session_id ?? null,
      delivered: status === 'orphan',
      next_delivery_at: status === 'orphan' ? null : new Date(now.getTime() + this.graceMs).toISOString(),
      delivery_attempts: 0,
      last_error: null,
      credit_result: null,
      // the chain's time of inclusion (capped at now): a payment included before expires_at counts normally
      detected_at: blockTime ?? at,
      created_at: at,
      updated_at: at,
      credited_at: null,
      reverted_at: null,
    };
    return retryOnConflict(
      async () => {
        try {
          await this.store.write([{ op: 'insert', coll: DEPOSITS, doc }]);
          return status === 'orphan' ? null : doc;
        } catch (e) {
          if (!isDuplicate(e)) throw e;
        }
        const existing = await this.store.get<DepositDoc>(DEPOSITS, doc.id);
        if (!existing) throw new DuplicateKeyError(DEPOSITS, `${doc.id} deleted meanwhile`); // insert again
        if (existing.status !== 'reverted') return null; // a replay: already recorded
        // a reorged transaction mined again on the canonical chain: the same key counts again
        const again: DepositDoc = {
          ...existing,
          block_number: found.block_number,
          block_hash: found.block_hash,
          block_time: blockTime,
          confirmations: found.confirmations,
          amount_subunits: found.amount_subunits,
          status,
          orphan_reason: reason,
          session_id: target?.session_id ?? null,
          delivered: status === 'orphan',
          next_delivery_at: status === 'orphan' ? null : new Date(now.getTime() + this.graceMs).toISOString(),
          last_error: null,
          updated_at: at,
          reverted_at: null,
        };
        await this.store.write([{ op: 'cas', coll: DEPOSITS, doc: again, expected: existing.version! }]);
        return status === 'orphan' ? null : again;
      },
      {
        ...CAS_RETRY,
        retryOn: (e) => isConflict(e) || isDuplicate(e),
        exhausted: () => new Error(`deposit ${doc.id} could not be recorded (too many concurrent changes)`),
      },
    );
  }

  /**
   * Every deposit of a chain and network at a block above `forkBlock` is taken back: status reverted
   * (stored first), then `revert` to its session. Returns the reverted documents.
   */
  async revertAbove(chain: string, network: string, forkBlock: number): Promise<DepositDoc[]> {
    const filter: Filter = { chain, network, block_number: { $gt: forkBlock } };
    const docs = await this.store.find<DepositDoc>(DEPOSITS, filter);
    const out: DepositDoc[] = [];
    for (const d of docs) {
      const r = await this.markReverted(d.id);
      if (r) out.push(r);
    }
    return out;
  }

  private markReverted(id: string): Promise<DepositDoc | null> {
    return retryOnConflict(
      async () => {
        const cur = await this.store.get<DepositDoc>(DEPOSITS, id);
        if (!cur || cur.status === 'reverted') return null;
        const at = this.now().toISOString();
        const owes = messageFor(cur) !== null;
        const doc: DepositDoc = {
          ...cur,
          status: 'reverted',
          reverted_at: at,
          updated_at: at,
          delivered: !owes,
          next_delivery_at: owes ? new Date(this.now().getTime() + this.graceMs).toISOString() : null,
        };
        await this.store.write([{ op: 'cas', coll: DEPOSITS, doc, expected: cur.version! }]);
        return doc;
      },
      { ...CAS_RETRY, exhausted: () => new Error(`deposit ${id} could not be reverted (too many concurrent changes)`) },
    );
  }

  /** The message the session is owed, from a document. */
  private messageOf(d: DepositDoc): SessionMsg | null {
    return owedMessage(d);
  }

  /**
   * Delivers what the deposit owes its session (see the file header). Never throws for a delivery
   * failure: the document is left due for the scanner with a backoff. Returns true when delivered.
   */
  async deliver(id: string, first?: DepositDoc): Promise<boolean> {
    let sent: 'credit' | 'revert' | null = null;
    let cur: DepositDoc | null = first ?? null;
    const gaveUp = new Error('gave up');
    try {
      return await retryOnConflict(
        async () => {
          if (!cur) cur = await this.store.get<DepositDoc>(DEPOSITS, id);
          if (!cur) return false;
          const want = messageFor(cur);
          if (want === null) return true;
          // delivered already, and nothing we sent may have overtaken it
          if (cur.delivered && (sent === null || sent === want)) return true;
          // (re)send: not delivered yet, or what we sent earlier may have overtaken a newer message
          let reply: SessionReply;
          try {
            reply = await this.send(cur.session_id!, this.messageOf(cur)!);
            sent = want;
          } catch (e) {
            if (isNotFound(e))
              return this.settle(cur, {
                status: 'orphan',
                orphan_reason: 'unknown_address',
                delivered: true,
                next_delivery_at: null,
                last_error: 'no such session',
              });
            const attempts = cur.delivery_attempts + 1;
            const backoff = Math.min(300_000, 1000 * 2 ** Math.min(attempts, 9));
            this.log.warn(
              `deposit ${cur.id}: delivery to session ${cur.session_id} failed (attempt ${attempts}), retried in ${backoff} ms:`,
              errorText(e),
            );
            await this.settle(cur, {
              delivery_attempts: attempts,
              last_error: errorText(e),
              next_delivery_at: new Date(this.now().getTime() + backoff).toISOString(),
            }).catch(() => undefined);
            return false;
          }
          const at = this.now().toISOString();
          const patch: Partial<DepositDoc> = { delivered: true, next_delivery_at: null, last_error: null, updated_at: at };
          if (want === 'credit') {
            patch.status = 'credited';
            patch.credited_at = cur.credited_at ?? at;
            if (reply?.credit) patch.credit_result = reply.credit;
          }
          try {
            await this.store.write([{ op: 'cas', coll: DEPOSITS, doc: { ...cur, ...patch }, expected: cur.version! }]);
          } catch (e) {
            if (isConflict(e)) cur = null; // changed meanwhile: read again and send what it says now
            throw e;
          }
          return true;
        },
        { ...CAS_RETRY, exhausted: () => gaveUp },
      );
    } catch (e) {
      if (e !== gaveUp) throw e;
      this.log.warn(`deposit ${id}: gave up delivering after repeated concurrent changes; the scanner retries`);
      return false;
    }
  }

  private async settle(cur: DepositDoc, patch: Partial<DepositDoc>): Promise<boolean> {
    try {
      await this.store.write([
        { op: 'cas', coll: DEPOSITS, doc: { ...cur, ...patch, updated_at: this.now().toISOString() }, expected: cur.version! },
      ]);
      return patch.delivered === true;
    } catch (e) {
      if (!isConflict(e)) throw e;
      return false;
    }
  }

  /**
   * The redelivery scanner of a chain (lib/core/due-scanner.ts): claims deposits whose delivery is due
   * and delivers them; a failed delivery comes back after the claim lease.
   */
  redeliveryScanner(chain: string, intervalMs: number, batch = 100, parallel = 8, drain = true): DueScanner<DepositDoc> {
    return new DueScanner<DepositDoc>({
      name: `${chain} deposit redelivery`,
      store: this.store,
      coll: DEPOSITS,
      dueField: 'next_delivery_at',
      filter: { chain },
      leaseMs: this.claimLeaseMs,
      intervalMs,
      batch,
      parallel,
      drain,
      now: this.now,
      log: this.log,
      handle: async (d) => {
        await this.deliver(d.id).catch((e) => {
          this.log.warn(`deposit ${d.id}: redelivery failed:`, errorText(e));
          return false;
        });
      },
    });
  }

  /** One claim of due deliveries of a chain, delivered now; returns how many were claimed. */
  redeliverDue(chain: string, limit = 100, parallel = 8): Promise<number> {
    return this.redeliveryScanner(chain, 0, limit, parallel, false).scanOnce();
  }
}
