/**
 * The webhook outbox row. A session transition and the event it causes are one atomic write: the
 * actor adds `webhookEventOp(...)` to its effects; the webhook service delivers from the store.
 */
import { newId } from '../core/ids.ts';
import type { Doc, WriteOp } from '../store/port.ts';

export type WebhookEventType = 'payment_session.completed' | 'payment_session.expired' | 'payment_session.partial_paid';

/** The body sent to the merchant (spec: WebhookEvent); every field required. */
export interface WebhookEventBody {
  event_type: WebhookEventType;
  session_id: string;
  status: string;
  amount: number;
  currency: string;
  chain: string;
  network: string;
  /** unix seconds carried as a string */
  timestamp: string;
}

export interface DeliveryAttempt {
  at: string;
  status: number | null;
  latency_ms: number;
  error: string | null;
}

export interface WebhookEventDoc extends Doc {
  merchant_id: string;
  session_id: string;
  event_type: WebhookEventType;
  body: WebhookEventBody;
  /** pending until delivered, failed after the retry schedule ends, skipped without a webhook_url */
  status: 'pending' | 'delivered' | 'failed' | 'skipped';
  attempts: DeliveryAttempt[];
  /** when the next attempt is due (claimed by the delivery scanner on any node) */
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export function webhookEventOp(args: {
  merchant_id: string;
  session_id: string;
  event_type: WebhookEventType;
  status: string;
  amount: number;
  currency: string;
  chain: string;
  network: string;
  now: Date;
}): WriteOp {
  const doc: WebhookEventDoc = {
    id: newId('evt'),
    merchant_id: args.merchant_id,
    session_id: args.session_id,
    event_type: args.event_type,
    body: {
      event_type: args.event_type,
      session_id: args.session_id,
      status: args.status,
      amount: args.amount,
      currency: args.currency,
      chain: args.chain,
      network: args.network,
      timestamp: String(Math.floor(args.now.getTime() / 1000)),
    },
    status: 'pending',
    attempts: [],
    next_attempt_at: args.now.toISOString(),
    created_at: args.now.toISOString(),
    delivered_at: null,
  };
  return { op: 'insert', coll: 'webhook_events', doc };
}

/**
 * The outbox row of any event (sessions, payouts, x402 payments): `subject` names what it is about
 * (`{payout_id}`, `{challenge_id}`, …) for the delivery log and audit; delivered from `now` on.
 */
export function eventRowOp(merchantId: string, subject: Record<string, string>, body: { event_type: string }, now: Date): WriteOp {
  return {
    op: 'insert',
    coll: 'webhook_events',
    doc: {
      id: newId('evt'),
      merchant_id: merchantId,
      ...subject,
      event_type: body.event_type,
      body,
      status: 'pending',
      attempts: [],
      next_attempt_at: now.toISOString(),
      created_at: now.toISOString(),
      delivered_at: null,
    },
  };
}
