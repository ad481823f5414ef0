/**
 * The payment-session actor: its state machine as a transition table plus pure functions, unit-tested
 * without a broker (test/unit/payment-session*.test.ts) and hosted by services/session-actors.service.ts.
 *
 *   (none)       --create-->                          pending
 *   pending      --credit, some but not enough-->     partial_paid   webhook payment_session.partial_paid
 *   pending      --credit, enough / simulate-->       completed      webhook payment_session.completed
 *   partial_paid --credit, enough / simulate-->       completed      webhook payment_session.completed
 *   pending, partial_paid --expire at expires_at-->   expired        webhook payment_session.expired
 *   completed    --revert, no longer enough-->        partial_paid / pending before expires_at
 *                                                     (webhook partial_paid when partial), expired after
 *                                                     it (webhook expired)
 *   partial_paid --revert of every deposit-->         pending        (no webhook: the spec names none)
 *
 * Rules:
 * - received = the sum of the credited deposits (counted: right token, not reverted). Each deposit is
 *   keyed by chain:network:tx:index and counted once; a key credited again after its revert (a reorged
 *   transaction mined again) counts again.
 * - Overpayment is kept: received may exceed expected; a deposit on a completed session is counted.
 * - A deposit detected before expires_at counts normally, even when its confirmations finish after it.
 *   A deposit detected at or after expires_at on a not yet expired session first expires it. A deposit on
 *   an expired session is recorded with late: true and counted in received, and never reopens it.
 * - A deposit in another token than the session's is recorded (counted: false), never summed.
 * - expired is final. completed is final except for the revert rule above: a reorg that takes back the
 *   money a completion rested on reopens the session (its completed_at is cleared), because the money is
 *   not there; a later deposit or simulation can complete it again (a new completed webhook).
 * - Simulate completes a demo session (anyone) or the owning sandbox merchant's session while it is
 *   pending or partial_paid, with a synthetic deposit of the missing amount (simulated: true), so that
 *   received still equals the sum of deposits. Refusals: blocked_non_demo, blocked_non_pending.
 * - Every named transition (partial_paid, completed, expired) writes its webhook outbox row in the same
 *   atomic write as the state (lib/webhooks/event.ts); demo sessions have no merchant and get none.
 * - Settlement: every deposit that becomes counted credits the merchant's default wallet of the chain
 *   and network once (ledger transfer keyed by the deposit key), and a revert takes it back, in the same
 *   atomic write (`sessionBehavior(settle)`, lib/wallets/settlement.ts).
 */
import type { ActorBehavior, Decision } from '../core/actor.ts';
import type { Doc, WriteOp } from '../store/port.ts';
import type { Environment } from '../runtime/metrics.ts';
import { webhookEventOp, type WebhookEventType } from '../webhooks/event.ts';
import { toApiNumber } from '../core/money.ts';
import type { RecordedRate } from '../core/rate.ts';
import type { SessionQuote } from '../rates/quote.ts';
import { badRequest, notFound } from '../core/errors.ts';

export type SessionStatus = 'pending' | 'partial_paid' | 'completed' | 'expired';
/**
 * The transition table as data: the statuses each status may move to. `transition` refuses anything else
 * (a bug, never a client error), and the tests iterate it: every move the decisions make is in it, and
 * every edge in it is reachable.
 */
export const ALLOWED: Readonly<Record<SessionStatus, readonly SessionStatus[]>> = {
  pending: ['partial_paid', 'completed', 'expired'],
  partial_paid: ['completed', 'expired', 'pending'],
  // reopened when a reorg takes back the money the completion rested on (expired when its time is up)
  completed: ['partial_paid', 'pending', 'expired'],
  expired: [],
};
export const SESSION_STATUSES = Object.keys(ALLOWED) as SessionStatus[];

/** statuses the expiry scanner looks at */
export const OPEN_STATUSES: SessionStatus[] = ['pending', 'partial_paid'];

/** The merchant id of demo sessions (they belong to no merchant). */
export const DEMO_MERCHANT_ID = 'demo';

/** A deposit as the chain listeners report it (message `credit`). */
export interface DepositInput {
  /** chain:network:tx:index; counted once */
  key: string;
  tx_hash: string;
  /** log index (Ethereum) or instruction index (Solana) */
  index: number;
  /** digits, smallest units of `token` */
  amount_subunits: string;
  token: string;
  confirmations: number;
  block_number?: number;
  block_hash?: string;
  /** when the transaction was first seen (ISO timestamp) */
  detected_at: string;
}

export interface DepositRecord {
  key: string;
  /** null for a simulated deposit */
  tx_hash: string | null;
  index: number;
  amount_subunits: string;
  token: string;
  confirmations: number;
  block_number: number | null;
  block_hash: string | null;
  detected_at: string;
  credited_at: string;
  /** credited while the session was already expired */
  late: boolean;
  /** false when the token is not the session's: recorded, never summed */
  counted: boolean;
  reverted: boolean;
  reverted_at: string | null;
  simulated: boolean;
}

export interface SessionEventRef {
  /** webhook_events id */
  id: string;
  type: WebhookEventType;
  at: string;
}

export interface PaymentSessionState extends Doc {
  merchant_id: string;
  demo: boolean;
  /** the merchant is a sandbox merchant (true for demo sessions) */
  sandbox: boolean;
  environment: Environment;
  /** 0: on-chain crypto transfer */
  method_id: 0;
  chain: string;
  network: string;
  token: string;
  decimals: number;
  /** digits, smallest units */
  expected_subunits: string;
  received_subunits: string;
  address: string;
  address_index: number;
  /** BIP-32 fingerprint of the key material the address was derived from */
  key_fingerprint: string;
  status: SessionStatus;
  metadata: Record<string, unknown>;
  /** where the checkout page sends the buyer back once paid or expired (https, or http under WEBHOOK_ALLOW_PRIVATE) */
  return_url?: string;
  expires_at: string;
  /** the scanner's due time: expires_at while open (pushed by claim leases), null when terminal */
  expiry_due_at: string | null;
  completed_at: string | null;
  expired_at: string | null;
  created_at: string;
  updated_at: string;
  deposits: DepositRecord[];
  /** webhook events this session has written, oldest first */
  events: SessionEventRef[];
  /** a session priced in fiat: the quote expected_subunits was converted at, locked for the session's life */
  quote?: SessionQuote;
  /** the spot rate of the token when the session completed (lib/rates), when one was known; absent otherwise */
  completion_rate?: RecordedRate & { stale: boolean };
}

export type SessionMsg =
  | { type: 'create'; session: PaymentSessionState }
  | { type: 'simulate'; caller_merchant_id: string | null }
  | { type: 'expire' }
  | { type: 'credit'; deposit: DepositInput }
  | { type: 'revert'; key: string };

export type SimulateRefusal = 'blocked_non_demo' | 'blocked_non_pending';

export interface SessionReply {
  session: PaymentSessionState;
  /** ids of the webhook events this message wrote (for webhooks.nudge) */
  events: string[];
  /** whether the message changed the session */
  changed: boolean;
  /** simulate only: why it was refused */
  refused?: SimulateRefusal;
  /** credit only: credited (counted now), duplicate (already counted), late (after expiry), ignored (other token) */
  credit?: 'credited' | 'duplicate' | 'late' | 'ignored';
}

export const isOpen = (s: SessionStatus) => s === 'pending' || s === 'partial_paid';

/** The sum of counted, non-reverted deposits. */
export function receivedOf(deposits: DepositRecord[]): bigint {
  let sum = 0n;
  for (const d of deposits) if (d.counted && !d.reverted) sum += BigInt(d.amount_subunits);
  return sum;
}

/** The open or completed status that a received amount means. */
export function statusForAmount(received: bigint, expected: bigint): 'pending' | 'partial_paid' | 'completed' {
  if (received >= expected) return 'completed';
  return received > 0n ? 'partial_paid' : 'pending';
}

export const isDue = (s: Pick<PaymentSessionState, 'expires_at'>, now: Date) => now.getTime() >= Date.parse(s.expires_at);

const EVENT_OF: Partial<Record<SessionStatus, WebhookEventType>> = {
  partial_paid: 'payment_session.partial_paid',
  completed: 'payment_session.completed',
  expired: 'payment_session.expired',
};

/** A decision under construction: the state is mutated in place, effects and events accumulate. */
interface Draft {
  s: PaymentSessionState;
  now: Date;
  effects: WriteOp[];
  events: string[];
  changed: boolean;
}

/** Moves to `next` (when different), with its timestamps and, for a named transition, its webhook row. */
function transition(d: Draft, next: SessionStatus): void {
  const { s, now } = d;
  if (s.status === next) return;
  if (!ALLOWED[s.status].includes(next)) throw new Error(`payment session ${s.id}: ${s.status} -> ${next} is not an allowed transition`);
  const at = now.toISOString();
  s.status = next;
  d.changed = true;
  if (next === 'completed') {
    s.completed_at = at;
    s.expiry_due_at = null;
  } else if (next === 'expired') {
    s.expired_at = at;
    s.completed_at = null;
    s.expiry_due_at = null;
  } else {
    // open again (a revert): the scanner must see it
    s.completed_at = null;
    s.expiry_due_at = s.expires_at;
  }
  const type = EVENT_OF[next];
  // completed is told once per session: a re-completion after a reorg took the money back keeps the first
  // event (and its X-Service-Event-Id), so a merchant deduplicating on the event id fulfils once
  const told = type === 'payment_session.completed' && s.events.some((e) => e.type === type);
  if (type && !s.demo && !told) {
    const op = webhookEventOp({
      merchant_id: s.merchant_id,
      session_id: s.id,
      event_type: type,
      status: next,
      amount: toApiNumber(s.expected_subunits, s.decimals),
      currency: s.token,
      chain: s.chain,
      network: s.network,
      now,
    });
    const id = (op as { doc: Doc }).doc.id;
    d.effects.push(op);
    d.events.push(id);
    s.events.push({ id, type, at });
  }
}

function refreshReceived(d: Draft): bigint {
  const received = receivedOf(d.s.deposits);
  if (received.toString() !== d.s.received_subunits) {
    d.s.received_subunits = received.toString();
    d.changed = true;
  }
  return received;
}

/** An open session whose time is up becomes expired. */
function expireIfDue(d: Draft): void {
  if (isOpen(d.s.status) && isDue(d.s, d.now)) transition(d, 'expired');
}

function finish(d: Draft, extra: Partial<SessionReply> = {}): Decision<PaymentSessionState, SessionReply> {
  if (!d.changed) return { reply: { session: d.s, events: [], changed: false, ...extra } };
  d.s.updated_at = d.now.toISOString();
  return { state: d.s, effects: d.effects, reply: { session: d.s, events: d.events, changed: true, ...extra } };
}

function checkDeposit(dep: DepositInput): void {
  if (!dep || typeof dep !== 'object') throw badRequest('deposit is required');
  if (typeof dep.key !== 'string' || !dep.key) throw badRequest('deposit.key is required');
  if (typeof dep.amount_subunits !== 'string' || !/^\d+$/.test(dep.amount_subunits) || BigInt(dep.amount_subunits) === 0n) {
    throw badRequest('deposit.amount_subunits must be a positive integer string');
  }
  if (typeof dep.token !== 'string') throw badRequest('deposit.token is required');
}

function credit(d: Draft, dep: DepositInput): Decision<PaymentSessionState, SessionReply> {
  checkDeposit(dep);
  const { s, now } = d;
  const existing = s.deposits.findIndex((x) => x.key === dep.key);
  if (existing >= 0 && !s.deposits[existing].reverted) return finish(d, { credit: 'duplicate' });
  const detected = Number.isFinite(Date.parse(dep.detected_at)) ? new Date(dep.detected_at) : now;
  // detected at or after the deadline: the session's time was up before this money arrived
  if (isOpen(s.status) && isDue(s, now) && detected.getTime() >= Date.parse(s.expires_at)) transition(d, 'expired');
  const counted = dep.token === s.token;
  const record: DepositRecord = {
    key: dep.key,
    tx_hash: dep.tx_hash ?? null,
    index: Number(dep.index ?? 0),
    amount_subunits: BigInt(dep.amount_subunits).toString(),
    token: dep.token,
    confirmations: Number(dep.confirmations ?? 0),
    block_number: dep.block_number ?? null,
    block_hash: dep.block_hash ?? null,
    detected_at: detected.toISOString(),
    credited_at: now.toISOString(),
    late: s.status === 'expired',
    counted,
    reverted: false,
    reverted_at: null,
    simulated: false,
  };
  if (existing >= 0) s.deposits[existing] = record;
  else s.deposits.push(record);
  d.changed = true;
  const received = refreshReceived(d);
  if (isOpen(s.status)) {
    transition(d, statusForAmount(received, BigInt(s.expected_subunits)));
    expireIfDue(d);
  }
  return finish(d, { credit: !counted ? 'ignored' : record.late ? 'late' : 'credited' });
}

function revert(d: Draft, key: string): Decision<PaymentSessionState, SessionReply> {
  if (typeof key !== 'string' || !key) throw badRequest('key is required');
  const { s, now } = d;
  const dep = s.deposits.find((x) => x.key === key && !x.reverted && !x.simulated);
  if (!dep) return finish(d);
  dep.reverted = true;
  dep.reverted_at = now.toISOString();
  d.changed = true;
  const received = refreshReceived(d);
  const expected = BigInt(s.expected_subunits);
  if (s.status === 'completed' && received < expected) {
    // the completion rested on money that is gone: reopen, or expire when its time is up
    transition(d, isDue(s, now) ? 'expired' : statusForAmount(received, expected));
  } else if (s.status === 'partial_paid') {
    transition(d, statusForAmount(received, expected));
    expireIfDue(d);
  }
  return finish(d);
}

function simulate(d: Draft, callerMerchantId: string | null): Decision<PaymentSessionState, SessionReply> {
  const { s, now } = d;
  const mayComplete = s.demo || (s.sandbox && callerMerchantId !== null && callerMerchantId === s.merchant_id);
  // a session past its deadline expires whatever the simulation's outcome
  expireIfDue(d);
  if (!mayComplete) return finish(d, { refused: 'blocked_non_demo' });
  if (!isOpen(s.status)) return finish(d, { refused: 'blocked_non_pending' });
  const missing = BigInt(s.expected_subunits) - receivedOf(s.deposits);
  const n = s.deposits.filter((x) => x.simulated).length;
  s.deposits.push({
    key: `simulation:${s.id}:${n}`,
    tx_hash: null,
    index: 0,
    amount_subunits: missing.toString(),
    token: s.token,
    confirmations: 0,
    block_number: null,
    block_hash: null,
    detected_at: now.toISOString(),
    credited_at: now.toISOString(),
    late: false,
    counted: true,
    reverted: false,
    reverted_at: null,
    simulated: true,
  });
  d.changed = true;
  refreshReceived(d);
  transition(d, 'completed');
  return finish(d);
}

function create(session: PaymentSessionState): PaymentSessionState {
  if (!session || typeof session !== 'object' || typeof session.id !== 'string') throw badRequest('session is required');
  return {
    ...session,
    status: 'pending',
    received_subunits: '0',
    expiry_due_at: session.expires_at,
    completed_at: null,
    expired_at: null,
    deposits: [],
    events: [],
  };
}

/** The transition function: decides from the current state; never writes. */
export function decideSession(state: PaymentSessionState | null, msg: SessionMsg, now: Date): Decision<PaymentSessionState, SessionReply> {
  if (msg.type === 'create') {
    if (state) return { reply: { session: state, events: [], changed: false } }; // a retried create
    const s = create(msg.session);
    return { state: s, reply: { session: s, events: [], changed: true } };
  }
  if (!state) throw notFound('payment session');
  const d: Draft = { s: state, now, effects: [], events: [], changed: false };
  switch (msg.type) {
    case 'expire':
      expireIfDue(d);
      return finish(d);
    case 'simulate':
      return simulate(d, msg.caller_merchant_id ?? null);
    case 'credit':
      return credit(d, msg.deposit);
    case 'revert':
      return revert(d, msg.key);
    default:
      throw badRequest(`unknown session message ${(msg as { type?: unknown }).type}`);
  }
}

/**
 * Settlement (issue 9): the ledger writes for deposits that became counted (credited) or stopped counting
 * (reverted) in a decision; committed in the same atomic write as the session's state.
 */
export type SettlementHook = (
  s: PaymentSessionState,
  credited: DepositRecord[],
  reverted: DepositRecord[],
  now: Date,
) => Promise<WriteOp[]>;

/** Deposits that count now and did not before (credited), and the reverse (reverted). */
export function settlementChanges(
  before: Map<string, boolean>,
  after: DepositRecord[],
): { credited: DepositRecord[]; reverted: DepositRecord[] } {
  const credited: DepositRecord[] = [];
  const reverted: DepositRecord[] = [];
  for (const d of after) {
    const was = before.get(d.key) === true;
    const is = d.counted && !d.reverted;
    if (is && !was) credited.push(d);
    if (was && !is) reverted.push(d);
  }
  return { credited, reverted };
}

/**
 * The actor's behaviour with its extras: `rates` records the token's rate on a completion (below);
 * `settle` makes every counted deposit of a merchant's session settle in the same write.
 */
/** Resolves a credit or revert message to what the deposit inbox owes the session (lib/chains/deposit-inbox.ts). */
export type DepositResolver = (sessionId: string, msg: SessionMsg) => Promise<SessionMsg>;

/**
 * `deposits`: the session actor credits only deposits recorded in the store's deposit inbox: a credit
 * message names a key, and the record (read in the actor's turn) supplies the amount, token and depth.
 */
export function sessionBehavior(
  opts: { settle?: SettlementHook; rates?: CompletionRateLookup; deposits?: DepositResolver } = {},
): ActorBehavior<PaymentSessionState, SessionMsg, SessionReply> {
  return {
    collection: 'payment_sessions',
    // a create carries a new id (ps_…, time-sortable and random): nothing to load first (its insert is the
    // guard). It was set on a behaviour no service ran, so every session create read its own id in vain.
    creates: (msg) => msg.type === 'create',
    // two sessions settling into one wallet race on its ledger account's first insert: decide again
    retryDuplicatesIn: ['ledger_accounts', 'ledger_transfers'],
    async handle(state, msg, now) {
      // decideSession changes the state it is given: remember what the extras compare with first
      const completedBefore = state?.completed_at ?? null;
      const counted = new Map((state?.deposits ?? []).map((d) => [d.key, d.counted && !d.reverted]));
      const resolved =
        opts.deposits && state && (msg.type === 'credit' || msg.type === 'revert') ? await opts.deposits(state.id, msg) : msg;
      const decision = decideSession(state, resolved, now);
      const s = decision.state;
      if (!s) return decision;
      if (opts.rates) {
        if (s.status === 'completed' && s.completed_at !== completedBefore) {
          const rate = await opts.rates(s.token, now).catch(() => null);
          if (rate) s.completion_rate = rate;
          else delete s.completion_rate;
        } else if (s.status !== 'completed' && s.completion_rate) {
          delete s.completion_rate;
        }
      }
      if (!opts.settle || s.demo) return decision;
      const { credited, reverted } = settlementChanges(counted, s.deposits);
      if (!credited.length && !reverted.length) return decision;
      const ops = await opts.settle(s, credited, reverted, now);
      return { ...decision, effects: [...(decision.effects ?? []), ...ops] };
    },
  };
}

/** Where a completing session finds its rate: the shared store cache only, never a network call in the turn. */
export type CompletionRateLookup = (base: string, now: Date) => Promise<(RecordedRate & { stale: boolean }) | null>;

/**
 * The behavior with the completion rate: a transition to completed records the token's rate at that moment
 * in the same write (so receipts and reports show the fiat value at payment time); a session that leaves
 * completed (a reorg) drops it, and a new completion records the rate of its own time.
 */
export function paymentSessionBehaviorWithRates(
  lookup: CompletionRateLookup,
): ActorBehavior<PaymentSessionState, SessionMsg, SessionReply> {
  return sessionBehavior({ rates: lookup });
}
