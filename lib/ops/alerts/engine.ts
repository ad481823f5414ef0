/**
 * The alert engine: store-backed sliding windows shared by every node, deduplication, stored alerts and
 * their delivery outbox.
 *
 * - Each observation adds one row per counter to `ops_window_events` (one atomic write), then counts the
 *   rows of the window (`at` later than now − window). Counting rows, not fixed buckets, makes the window
 *   exact: a threshold is crossed by the event that crosses it on whichever node it happens.
 * - Dedup: `alert_state` holds one document per alert type and key. A crossing within one window of the
 *   key's last crossing belongs to the open alert (its count and window_end move on); it is sent again
 *   only once ALERT_RENOTIFY_INTERVAL has passed since the last notification. Two nodes crossing at once
 *   race on the state's insert or compare-and-set; the loser re-reads and joins the winner's alert.
 * - A new or re-notified alert, its state and one outbox row per configured destination are one atomic
 *   write (`alert_deliveries`, delivered by delivery.ts from any node), so an alert is never lost between
 *   being raised and being sent.
 * - An alert whose condition is known to have ended (a reconciliation drift no longer found, or
 *   acknowledged by an operator) is resolved: its status, and a `resolved` delivery per destination, in one
 *   write; the next crossing of its key opens a new alert.
 */
import { newId } from '../../core/ids.ts';
import { retryOnConflict } from '../../core/retry.ts';
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../../store/port.ts';
import type { AlertsConfig } from '../../../config/index.ts';
import { exceeds, plan, renotifyDue, sameAlert, SEVERITY, type AlertType, type Check, type Observation, type Severity } from './rules.ts';
import { buildAlertPayload, type AlertContext, type AlertPayload } from './payload.ts';

export const WINDOW_EVENTS = 'ops_window_events';
export const ALERT_STATE = 'alert_state';
export const ALERTS = 'alerts';
export const ALERT_DELIVERIES = 'alert_deliveries';

export type Destination = 'webhook' | 'alertmanager';

export interface AlertDoc extends Doc {
  alert_type: AlertType;
  severity: Severity;
  key: string;
  rule: string;
  merchant_id: string | null;
  status: 'open' | 'resolved';
  /** how a resolved alert ended: its condition no longer holds, or an operator acknowledged it */
  resolution?: Resolution;
  resolved_at?: string;
  payload: AlertPayload;
  notifications: number;
  created_at: string;
  updated_at: string;
}

export type Resolution = 'resolved' | 'acknowledged';

interface StateDoc extends Doc {
  alert_id: string;
  last_seen_at: string;
  last_notified_at: string;
  window_ms: number;
  /**
   * one window after the last crossing the state decides nothing any more (the next crossing opens a new
   * alert), so the store purges it: keys such as hashed sources would otherwise pile up forever
   */
  expires_at: string;
}

const expiry = (now: Date, windowMs: number) => new Date(now.getTime() + windowMs).toISOString();

export interface AlertDeliveryDoc extends Doc {
  alert_id: string;
  destination: Destination;
  /** absent: the alert raised or re-notified; `resolved`: its end (Alertmanager's endsAt, the webhook's event) */
  event?: 'resolved';
  /** a resolution's time */
  ends_at?: string;
  payload: AlertPayload;
  status: 'pending' | 'delivered' | 'failed';
  next_attempt_at: string | null;
  attempts: number;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface RaisedAlert {
  alert: AlertDoc;
  /** false: a crossing folded into an open alert without a new notification */
  notified: boolean;
  isNew: boolean;
}

export interface EngineDeps {
  store: Store;
  config: AlertsConfig;
  now(): Date;
  /** merchant names for payloads */
  merchantName?(id: string): Promise<string | null>;
  onRaised?(a: RaisedAlert): void;
}

const MAX_RACE_ATTEMPTS = 50;

export class AlertEngine {
  private readonly d: EngineDeps;
  constructor(deps: EngineDeps) {
    this.d = deps;
  }

  destinations(): Destination[] {
    const out: Destination[] = [];
    if (this.d.config.webhookUrl) out.push('webhook');
    if (this.d.config.alertmanagerUrl) out.push('alertmanager');
    return out;
  }

  /** Counts the observation and raises what it crosses; returns the alerts raised or continued. */
  async observe(obs: Observation, ctx: AlertContext = {}): Promise<RaisedAlert[]> {
    const { store } = this.d;
    const now = this.d.now();
    const at = now.toISOString();
    const p = plan(obs, this.d.config);
    if (p.events.length > 0) {
      await store.write(
        p.events.map((e) => ({
          op: 'insert' as const,
          coll: WINDOW_EVENTS,
          doc: { id: newId('owe', now.getTime()), counter: e.counter, at, expires_at: new Date(now.getTime() + e.keepMs).toISOString() },
        })),
      );
    }
    const raised: RaisedAlert[] = [];
    const seen = new Set<string>();
    for (const check of p.checks) {
      const dedup = `${check.type}|${check.key}`;
      if (seen.has(dedup)) continue;
      const since = new Date(now.getTime() - check.windowMs).toISOString();
      const counted = await store.count(WINDOW_EVENTS, { counter: check.counter, at: { $gt: since } });
      const total = check.mode === 'rate' ? await store.count(WINDOW_EVENTS, { counter: check.total!, at: { $gt: since } }) : 0;
      if (!exceeds(check, counted, total)) continue;
      seen.add(dedup);
      const shown = check.mode === 'rate' ? Math.floor((counted * 100) / total) : counted;
      raised.push(await this.raise(check, shown, ctx, now, since));
    }
    return raised;
  }

  private async raise(check: Check, count: number, ctx: AlertContext, now: Date, windowStart: string): Promise<RaisedAlert> {
    const { store, config } = this.d;
    const at = now.toISOString();
    const stateId = `${check.type}|${check.key}`;
    const merchantId = ctx.merchant_id ?? null;
    const merchantName =
      merchantId && ctx.merchant_name === undefined && this.d.merchantName ? await this.d.merchantName(merchantId) : ctx.merchant_name;
    // another node may raise or move the same alert at the same moment: re-read and join it
    return retryOnConflict(
      async () => {
        const state = await store.get<StateDoc>(ALERT_STATE, stateId);
        const found =
          state && sameAlert(state.last_seen_at, now, Math.max(state.window_ms, check.windowMs))
            ? await store.get<AlertDoc>(ALERTS, state.alert_id)
            : null;
        // a resolved alert stays resolved: a new crossing opens a new one
        const current = found?.status === 'open' ? found : null;
        const ops: WriteOp[] = [];
        let alert: AlertDoc;
        let notify: boolean;
        if (current && state) {
          notify = renotifyDue(state.last_notified_at, now, config.renotifyMs);
          const payload = buildAlertPayload(
            {
              alert_id: current.id,
              alert_type: check.type,
              severity: SEVERITY[check.type],
              window_start: current.payload.window_start,
              window_end: at,
              count: Math.max(count, current.payload.count),
              threshold: check.threshold,
            },
            { ...ctx, merchant_name: merchantName },
          );
          alert = { ...current, payload, updated_at: at, notifications: current.notifications + (notify ? 1 : 0) };
          const windowMs = Math.max(state.window_ms, check.windowMs);
          ops.push(
            {
              op: 'cas',
              coll: ALERT_STATE,
              doc: {
                ...state,
                last_seen_at: at,
                last_notified_at: notify ? at : state.last_notified_at,
                expires_at: expiry(now, windowMs),
              },
              expected: state.version!,
            },
            { op: 'cas', coll: ALERTS, doc: alert, expected: current.version! },
          );
        } else {
          notify = true;
          const id = newId('alt', now.getTime());
          const payload = buildAlertPayload(
            {
              alert_id: id,
              alert_type: check.type,
              severity: SEVERITY[check.type],
              window_start: windowStart,
              window_end: at,
              count,
              threshold: check.threshold,
            },
            { ...ctx, merchant_name: merchantName },
          );
          alert = {
            id,
            alert_type: check.type,
            severity: SEVERITY[check.type],
            key: check.key,
            rule: check.rule,
            merchant_id: payload.merchant_id,
            status: 'open',
            payload,
            notifications: 1,
            created_at: at,
            updated_at: at,
          };
          const next: StateDoc = {
            id: stateId,
            alert_id: id,
            last_seen_at: at,
            last_notified_at: at,
            window_ms: check.windowMs,
            expires_at: expiry(now, check.windowMs),
          };
          ops.push(
            state ? { op: 'cas', coll: ALERT_STATE, doc: next, expected: state.version! } : { op: 'insert', coll: ALERT_STATE, doc: next },
          );
          ops.push({ op: 'insert', coll: ALERTS, doc: alert });
        }
        if (notify) {
          for (const destination of this.destinations())
            ops.push({ op: 'insert', coll: ALERT_DELIVERIES, doc: deliveryRow(alert, destination, now) });
        }
        try {
          await store.write(ops);
        } catch (e) {
          // a refresh of an open alert that lost the race: a concurrent observer refreshed it (its count is
          // as recent as ours), so there is nothing left to write; a new alert or a notification retries
          if (current && !notify && isConflict(e)) return { alert: current, notified: false, isNew: false };
          throw e;
        }
        const out = { alert, notified: notify, isNew: !current };
        this.d.onRaised?.(out);
        return out;
      },
      { attempts: MAX_RACE_ATTEMPTS, retryOn: (e) => isConflict(e) || isDuplicate(e) },
    );
  }

  /**
   * Resolves the open alerts of a type and key: each gets its status and a `resolved` delivery per
   * destination in one write (Alertmanager: endsAt now; the webhook: `X-Service-Event: alert.<type>.resolved`).
   * Returns the alerts resolved (none when nothing was open).
   */
  async resolve(type: AlertType, key: string, resolution: Resolution): Promise<AlertDoc[]> {
    const { store } = this.d;
    const out: AlertDoc[] = [];
    for (const open of await store.find<AlertDoc>(ALERTS, { alert_type: type, key, status: 'open' })) {
      const done = await retryOnConflict(
        async () => {
          const cur = await store.get<AlertDoc>(ALERTS, open.id);
          if (!cur || cur.status !== 'open') return null;
          const now = this.d.now();
          const at = now.toISOString();
          const next: AlertDoc = { ...cur, status: 'resolved', resolution, resolved_at: at, updated_at: at };
          const ops: WriteOp[] = [{ op: 'cas', coll: ALERTS, doc: next, expected: cur.version! }];
          for (const destination of this.destinations())
            ops.push({ op: 'insert', coll: ALERT_DELIVERIES, doc: deliveryRow(next, destination, now, at) });
          await store.write(ops);
          return next;
        },
        { attempts: MAX_RACE_ATTEMPTS, retryOn: isConflict },
      );
      if (done) out.push(done);
    }
    return out;
  }
}

/** a pending delivery of the alert to one destination: its firing, or with `endsAt` its resolution */
function deliveryRow(alert: AlertDoc, destination: Destination, now: Date, endsAt?: string): AlertDeliveryDoc {
  const at = now.toISOString();
  return {
    id: newId('ald', now.getTime()),
    alert_id: alert.id,
    destination,
    ...(endsAt === undefined ? {} : { event: 'resolved' as const, ends_at: endsAt }),
    payload: alert.payload,
    status: 'pending',
    next_attempt_at: at,
    attempts: 0,
    last_error: null,
    created_at: at,
    delivered_at: null,
  };
}
