/**
 * The pure part of webhook delivery: the retry schedule, what an attempt does to an outbox row, and how
 * the delivery log is shown. No I/O here; services/webhooks.service.ts does the claiming and dialling.
 *
 * Retry schedule (delays after the 1st, 2nd, … failed attempt, at the default base of 30 s; every delay
 * scales with WEBHOOK_RETRY_BASE_MS and gets ±20 % jitter):
 *
 *   30 s, 1 min, 2 min, 5 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h, then 24 h again
 *
 * capped by a window of 72 h (8640 × base) after the event was created: the last attempt happens at the
 * end of the window at the latest; when an attempt at or after the end fails, the event is `failed`.
 * With the default base that is 14 attempts: 0, 30 s, 1.5 min, 3.5 min, 8.5 min, 18.5 min, 48.5 min,
 * ≈1.8 h, ≈3.8 h, ≈7.8 h, ≈15.8 h, ≈27.8 h, ≈51.8 h and 72 h after the event.
 */
import type { DeliveryAttempt, WebhookEventDoc } from './event.ts';
import type { DeliveryErrorClass } from './dialer.ts';

/** Delays after each failure, in units of the base (30 s by default). */
export const RETRY_MULTIPLIERS: readonly number[] = [1, 2, 4, 10, 20, 60, 120, 240, 480, 960, 1440, 2880];
/** The retry window, in units of the base: 8640 × 30 s = 72 h. */
export const RETRY_WINDOW_MULTIPLIER = 8640;
export const JITTER = 0.2;

/** An attempt as logged: when, HTTP status, latency, error class; never the secret or the response body. */
export interface LoggedAttempt extends DeliveryAttempt {
  error: DeliveryErrorClass | null;
  /** made by POST …/webhook/retry rather than by the schedule */
  manual?: boolean;
}

/** The outbox row with the delivery service's own field (additive to WebhookEventDoc). */
export interface DeliveryDoc extends WebhookEventDoc {
  attempts: LoggedAttempt[];
  /** set while one node is attempting the row: nobody else touches it until then */
  lease_until?: string | null;
}

/** The delay after the n-th failed attempt (n ≥ 1), before jitter. */
export function baseDelayMs(failures: number, baseMs: number): number {
  const i = Math.min(Math.max(failures, 1), RETRY_MULTIPLIERS.length) - 1;
  return RETRY_MULTIPLIERS[i] * baseMs;
}

/** When to try again after `failures` failed attempts, or null when the retry window is over. */
export function nextAttemptAt(
  createdAt: Date,
  failures: number,
  now: Date,
  baseMs: number,
  random: () => number = Math.random,
): Date | null {
  const windowEnd = createdAt.getTime() + RETRY_WINDOW_MULTIPLIER * baseMs;
  if (now.getTime() >= windowEnd) return null;
  const jitter = 1 - JITTER + 2 * JITTER * random();
  const at = now.getTime() + Math.round(baseDelayMs(failures, baseMs) * jitter);
  return new Date(Math.min(at, windowEnd));
}

export interface AttemptOutcome {
  doc: DeliveryDoc;
  /** the audit event this attempt causes */
  audit: 'delivered' | 'failed' | 'skipped';
  /** true when this failure ended the retry schedule */
  final: boolean;
}

/**
 * Applies one attempt to the row. Success: delivered. A failure of a pending event: the next attempt is
 * scheduled, or the event is failed once the window is over. A failed manual redelivery of an event that
 * was already delivered or failed leaves that status as it was (the attempt is in the log).
 */
export function applyAttempt(
  doc: DeliveryDoc,
  attempt: LoggedAttempt,
  ok: boolean,
  now: Date,
  baseMs: number,
  random: () => number = Math.random,
): AttemptOutcome {
  const attempts = [...doc.attempts, attempt];
  const base: DeliveryDoc = { ...doc, attempts, lease_until: null };
  if (ok) {
    return {
      doc: { ...base, status: 'delivered', delivered_at: now.toISOString(), next_attempt_at: null },
      audit: 'delivered',
      final: false,
    };
  }
  if (doc.status !== 'pending') return { doc: { ...base, next_attempt_at: null }, audit: 'failed', final: false };
  // the schedule's own failures: a manual redelivery does not move it on
  const failures = attempts.filter((a) => a.error !== null && !a.manual).length;
  const next = nextAttemptAt(new Date(doc.created_at), failures, now, baseMs, random);
  if (!next) return { doc: { ...base, status: 'failed', next_attempt_at: null }, audit: 'failed', final: true };
  return { doc: { ...base, status: 'pending', next_attempt_at: next.toISOString() }, audit: 'failed', final: false };
}

/** No webhook_url: nothing is sent, ever (there is no endpoint to add one later). */
export function applySkip(doc: DeliveryDoc): DeliveryDoc {
  return { ...doc, status: 'skipped', next_attempt_at: null, lease_until: null };
}

/** One event of the delivery log as the API shows it. */
export function presentEvent(doc: DeliveryDoc) {
  return {
    event_id: doc.id,
    event_type: doc.event_type,
    status: doc.status,
    /** exactly what is sent (the signature covers its JSON serialization) */
    body: doc.body,
    created_at: doc.created_at,
    delivered_at: doc.delivered_at,
    next_attempt_at: doc.status === 'pending' ? doc.next_attempt_at : null,
    attempts: doc.attempts.map((a) => ({
      at: a.at,
      status: a.status,
      latency_ms: a.latency_ms,
      error: a.error,
      ...(a.manual ? { manual: true } : {}),
    })),
  };
}
