/**
 * Sends stored alerts from the outbox (`alert_deliveries`) to the configured destinations, from any node:
 *
 * - ALERT_WEBHOOK_URL: the payload as JSON, signed exactly like merchant webhooks
 *   (`X-Service-Signature: t=<unix>,v1=<HMAC-SHA256 of "<t>.<body>">`, lib/webhooks/signature.ts) with
 *   ALERT_WEBHOOK_SECRET, `X-Service-Event: alert.<alert_type>`, `X-Service-Event-Id: <delivery id>`.
 * - ALERTMANAGER_URL: Alertmanager's v2 API (`POST /api/v2/alerts`), one alert whose labels are the
 *   low-cardinality fields (alertname = alert_type, severity, environment, alert_id) and whose
 *   annotations are the payload's other fields; endsAt one re-notify interval after window_end, so an
 *   alert that stops crossing resolves by itself, or the time it was resolved (engine.ts `resolve`): the
 *   same labels with an endsAt in the past resolve it in Alertmanager at once. The webhook gets a
 *   resolution as the same payload with `X-Service-Event: alert.<alert_type>.resolved`.
 *
 * Both go through the webhook dialer (one deadline, no redirects, response body never kept). The
 * destinations are the operator's own configuration, so private addresses are allowed (an Alertmanager
 * usually sits on an internal network). Claims are atomic (store.claimDue), every outcome is a
 * compare-and-set on the claimed version; failures are retried with exponential backoff up to 24 hours.
 */
import type { Store } from '../../store/port.ts';
import type { AlertsConfig } from '../../../config/index.ts';
import { EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from '../../webhooks/signature.ts';
import { postWebhook, type DialResult } from '../../webhooks/dialer.ts';
import { ALERT_DELIVERIES, type AlertDeliveryDoc } from './engine.ts';
import type { AlertPayload } from './payload.ts';
import { isConflict } from '../../store/port.ts';

export const ALERT_USER_AGENT = 'StablecoinPaymentService-Alerts/1';
const GIVE_UP_MS = 24 * 3600_000;
const MAX_BACKOFF_MS = 3600_000;

/** The Alertmanager v2 body for one alert (`endsAt`: a resolution's time). */
export function alertmanagerBody(p: AlertPayload, renotifyMs: number, endsAt?: string): unknown[] {
  const labels: Record<string, string> = {
    alertname: p.alert_type,
    alert_type: p.alert_type,
    severity: p.severity,
    service: 'stablecoin-payment-service',
    alert_id: p.alert_id,
  };
  if (p.environment) labels.environment = p.environment;
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) {
    if (k in labels || v === null) continue;
    annotations[k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  annotations.summary = `${p.alert_type} (${p.severity}): ${p.count} against a threshold of ${p.threshold}`;
  return [
    {
      labels,
      annotations,
      startsAt: p.window_start,
      endsAt: endsAt ?? new Date(Date.parse(p.window_end) + renotifyMs).toISOString(),
    },
  ];
}

export interface AlertSender {
  send(row: AlertDeliveryDoc, now: Date): Promise<DialResult>;
}

export function httpAlertSender(cfg: AlertsConfig): AlertSender {
  return {
    send(row, now) {
      const opts = { allowPrivate: true, allowHttp: true, timeoutMs: cfg.timeoutMs };
      if (row.destination === 'alertmanager') {
        const body = JSON.stringify(alertmanagerBody(row.payload, cfg.renotifyMs, row.event === 'resolved' ? row.ends_at : undefined));
        return postWebhook(
          `${cfg.alertmanagerUrl}/api/v2/alerts`,
          body,
          { 'Content-Type': 'application/json', 'User-Agent': ALERT_USER_AGENT },
          opts,
        );
      }
      const raw = JSON.stringify(row.payload);
      return postWebhook(
        cfg.webhookUrl,
        raw,
        {
          'Content-Type': 'application/json',
          'User-Agent': ALERT_USER_AGENT,
          [EVENT_HEADER]: `alert.${row.payload.alert_type}${row.event === 'resolved' ? '.resolved' : ''}`,
          [EVENT_ID_HEADER]: row.id,
          [SIGNATURE_HEADER]: signatureHeader(raw, [cfg.webhookSecret], Math.floor(now.getTime() / 1000)),
        },
        opts,
      );
    },
  };
}

export function nextAttemptAt(row: Pick<AlertDeliveryDoc, 'created_at' | 'attempts'>, now: Date): string | null {
  const backoff = Math.min(MAX_BACKOFF_MS, 5_000 * 2 ** Math.min(row.attempts, 20));
  const next = now.getTime() + backoff;
  return next - Date.parse(row.created_at) > GIVE_UP_MS ? null : new Date(next).toISOString();
}

/** The claim lease of an alert delivery: longer than one attempt and the write after it. */
export const deliveryLeaseMs = (timeoutMs: number) => timeoutMs * 2 + 5_000;

/**
 * Sends one claimed row (the due-scanner claimed it, so no other node does now) and records the outcome
 * by compare-and-set on the claimed version.
 */
export async function deliverOne(
  store: Store,
  sender: AlertSender,
  row: AlertDeliveryDoc,
  now: () => Date,
  log?: { warn(...a: unknown[]): void },
): Promise<void> {
  const at = now();
  const result = await sender.send(row, at);
  const attempts = row.attempts + 1;
  const next = result.ok ? null : nextAttemptAt({ created_at: row.created_at, attempts }, at);
  const doc: AlertDeliveryDoc = {
    ...row,
    attempts,
    status: result.ok ? 'delivered' : next === null ? 'failed' : 'pending',
    next_attempt_at: next,
    last_error: result.ok ? null : `${result.error}${result.status ? ` ${result.status}` : ''}`,
    delivered_at: result.ok ? at.toISOString() : null,
  };
  if (!result.ok)
    log?.warn(`alert ${row.alert_id} to ${row.destination} failed (${doc.last_error}); ${next ? `retry at ${next}` : 'giving up'}`);
  try {
    await store.write([{ op: 'cas', coll: ALERT_DELIVERIES, doc, expected: row.version! }]);
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
}
