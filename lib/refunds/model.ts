/**
 * Refunds: money a merchant sends back to whoever paid a payment session. A refund is a movement of its
 * own kind (ledger transfer kind `refund`, outbox purpose `refund`, fee-policy movement `refund`), paid
 * from the merchant's settlement wallet of the session's chain and network and carried out on chain by
 * the payout executor (lib/treasury/payout-executor.ts) like a payout.
 *
 *   pending ──(signed tx persisted)──▶ processing ──(outbox final write)──▶ completed | failed
 *   a simulated refund (sandbox money) is completed at acceptance; pending may fail before any send.
 *
 * Per session, `refund_totals` (id = the session id) counts what is refunded or on its way (every refund
 * not failed): acceptance compare-and-sets it in the same write as the refund and its ledger
 * reservation, and a refund's failure takes its amount back out in its final write. So concurrent
 * refunds of one session can never pass what it received.
 */
import type { Doc, Store, WriteOp } from '../store/port.ts';
import { eventRowOp } from '../webhooks/event.ts';
import { auditOp } from '../core/audit.ts';

export const REFUNDS = 'refunds';
export const REFUND_TOTALS = 'refund_totals';

export type RefundStatus = 'pending' | 'processing' | 'completed' | 'failed';
/** chain: an on-chain transfer from the settlement wallet; simulated: sandbox money, completed at once */
export type RefundExecution = 'chain' | 'simulated';

export const REFUND_TRANSITIONS: Record<RefundStatus, RefundStatus[]> = {
  pending: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};

export interface RefundDoc extends Doc {
  id: string;
  session_id: string;
  merchant_id: string;
  /** the merchant's settlement wallet the refund is paid from */
  wallet_id: string;
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  token: string;
  /** the rail key, the ledger asset */
  asset: string;
  amount_subunits: string;
  /** normalized address; null only for a simulated refund of simulated money sent without one */
  destination: string | null;
  /** sender: the address that paid the session (no destination was sent); merchant: the request named it */
  destination_source: 'sender' | 'merchant';
  reason: string | null;
  metadata: Record<string, unknown> | null;
  status: RefundStatus;
  execution: RefundExecution;
  simulated: boolean;
  tx_hash: string | null;
  /** as on a payout: the quote reserved with the amount, then what the chain took ("0" when simulated) */
  fee_subunits: string | null;
  fee_quote?: { fee_subunits: string; rent_subunits: string; gas_limit: string | null; gas_price: string | null } | null;
  waiting_reason?: string | null;
  failure_reason: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  version?: number;
}

/** What a session has refunded: every refund not failed (pending ones count), by where its money came from. */
export interface RefundTotalsDoc extends Doc {
  /** the session id */
  id: string;
  merchant_id: string;
  /** chain + simulated */
  refunded_subunits: string;
  /** refunds of money received on chain */
  chain_subunits: string;
  /** refunds of simulated sandbox money */
  simulated_subunits: string;
  /** refunds ever accepted (failed ones included) */
  count: number;
  updated_at: string;
  version?: number;
}

/** What the refunds of each of `sessionIds` took (smallest units; absent: nothing). */
export async function refundedBySession(store: Store, sessionIds: string[]): Promise<Map<string, string>> {
  if (sessionIds.length === 0) return new Map();
  const rows =
    sessionIds.length === 1
      ? [await store.get<RefundTotalsDoc>(REFUND_TOTALS, sessionIds[0]!)].filter((x): x is RefundTotalsDoc => !!x)
      : await store.find<RefundTotalsDoc>(REFUND_TOTALS, { id: { $in: sessionIds } });
  return new Map(rows.map((r) => [r.id, r.refunded_subunits]));
}

export const emptyTotals = (sessionId: string, merchantId: string): RefundTotalsDoc => ({
  id: sessionId,
  merchant_id: merchantId,
  refunded_subunits: '0',
  chain_subunits: '0',
  simulated_subunits: '0',
  count: 0,
  updated_at: '',
});

/** The totals after a refund is accepted (+) or has failed (−), as a write (insert when new). */
export function totalsOp(
  current: RefundTotalsDoc | null,
  r: Pick<RefundDoc, 'session_id' | 'merchant_id' | 'amount_subunits' | 'simulated'>,
  sign: 1n | -1n,
  at: string,
): WriteOp {
  const base = current ?? emptyTotals(r.session_id, r.merchant_id);
  const delta = sign * BigInt(r.amount_subunits);
  const chain = BigInt(base.chain_subunits) + (r.simulated ? 0n : delta);
  const simulated = BigInt(base.simulated_subunits) + (r.simulated ? delta : 0n);
  if (chain < 0n || simulated < 0n) throw new Error(`refund totals of session ${r.session_id} would go below zero`);
  const doc: RefundTotalsDoc = {
    ...base,
    chain_subunits: chain.toString(),
    simulated_subunits: simulated.toString(),
    refunded_subunits: (chain + simulated).toString(),
    count: base.count + (sign > 0n ? 1 : 0),
    updated_at: at,
  };
  return current ? { op: 'cas', coll: REFUND_TOTALS, doc, expected: current.version! } : { op: 'insert', coll: REFUND_TOTALS, doc };
}

export type RefundEventType = 'refund.completed' | 'refund.failed';

/** The webhook body of a refund event. */
export interface RefundEventBody {
  event_type: RefundEventType;
  refund_id: string;
  session_id: string;
  status: 'completed' | 'failed';
  /** token units as a JSON number (like session events); the exact value is amount_subunits */
  amount: number;
  amount_subunits: string;
  currency: string;
  chain: string;
  network: string;
  destination: string | null;
  /** unix seconds carried as a string */
  timestamp: string;
  tx_hash: string | null;
  simulated: boolean;
  failure_reason: string | null;
}

/** The outbox row of a refund event (same collection, signature and retries as every event). */
export function refundEventOp(r: RefundDoc, amount: number, now: Date): WriteOp {
  if (r.status !== 'completed' && r.status !== 'failed')
    throw new Error(`refund ${r.id} is ${r.status}: only completed or failed refunds have events`);
  const body: RefundEventBody = {
    event_type: r.status === 'completed' ? 'refund.completed' : 'refund.failed',
    refund_id: r.id,
    session_id: r.session_id,
    status: r.status,
    amount,
    amount_subunits: r.amount_subunits,
    currency: r.token,
    chain: r.chain,
    network: r.network,
    destination: r.destination,
    timestamp: String(Math.floor(now.getTime() / 1000)),
    tx_hash: r.tx_hash,
    simulated: r.simulated,
    failure_reason: r.failure_reason,
  };
  return eventRowOp(r.merchant_id, { refund_id: r.id, session_id: r.session_id }, body, now);
}

/** `refund.created`, `.completed`, `.failed` audit rows: ids, rail, amount and outcome, never a key or signed bytes. */
export function refundAuditOp(event: 'created' | 'completed' | 'failed', r: RefundDoc, at: Date | string): WriteOp {
  return auditOp(
    `refund.${event}`,
    {
      merchant_id: r.merchant_id,
      refund_id: r.id,
      session_id: r.session_id,
      wallet_id: r.wallet_id,
      chain: r.chain,
      network: r.network,
      token: r.token,
      amount_subunits: r.amount_subunits,
      execution: r.execution,
      status: r.status,
      ...(r.tx_hash ? { tx_hash: r.tx_hash } : {}),
      ...(r.failure_reason ? { failure_reason: r.failure_reason } : {}),
    },
    at,
  );
}
