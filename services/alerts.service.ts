/**
 * Operational alerts (facade): delivers the alert outbox to ALERT_WEBHOOK_URL and ALERTMANAGER_URL from
 * every node running it (claims are atomic), and lists alerts to operators (`npm run operator alerts`,
 * the REPL). Alerts are raised where things happen (lib/ops/alerts), not here.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { badRequest } from '../lib/core/errors.ts';
import { ALERT_DELIVERIES, ALERTS, type AlertDeliveryDoc, type AlertDoc } from '../lib/ops/alerts/engine.ts';
import { ALERT_TYPES, type AlertType } from '../lib/ops/alerts/rules.ts';
import { deliverDue, httpAlertSender } from '../lib/ops/alerts/delivery.ts';
import type { Filter } from '../lib/store/port.ts';

export function createAlertsService(rt: Runtime): ServiceSchema {
  const cfg = rt.config.alerts;
  const sender = httpAlertSender(cfg);
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  const scan = (logger: { warn(...a: unknown[]): void }) =>
    deliverDue(rt.store, sender, () => rt.now(), { timeoutMs: cfg.timeoutMs, log: logger });

  return {
    name: 'alerts',
    actions: {
      /** Alerts, newest first: `type`, `merchant_id`, `since` (ISO time), `limit` 1..500 (default 50). */
      list: {
        visibility: 'public',
        async handler(ctx: Context<{ type?: string; merchant_id?: string; since?: string; limit?: number }>) {
          const p = ctx.params ?? {};
          const filter: Filter = {};
          if (p.type !== undefined) {
            if (!ALERT_TYPES.includes(p.type as AlertType)) throw badRequest(`type must be one of ${ALERT_TYPES.join(', ')}`);
            filter.alert_type = p.type;
          }
          if (p.merchant_id) filter.merchant_id = String(p.merchant_id);
          if (p.since) {
            const t = Date.parse(String(p.since));
            if (Number.isNaN(t)) throw badRequest('since must be an ISO timestamp');
            filter.created_at = { $gte: new Date(t).toISOString() };
          }
          const limit = p.limit === undefined ? 50 : Number(p.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be an integer from 1 to 500');
          const alerts = await rt.store.find<AlertDoc>(ALERTS, filter, { sort: 'created_at', desc: true, limit });
          const deliveries = alerts.length === 0 ? [] : await rt.store.find<AlertDeliveryDoc>(ALERT_DELIVERIES, { alert_id: { $in: alerts.map((a) => a.id) } });
          return {
            alerts: alerts.map((a) => ({
              ...a.payload,
              notifications: a.notifications,
              deliveries: deliveries.filter((d) => d.alert_id === a.id).map((d) => ({ destination: d.destination, status: d.status, attempts: d.attempts, last_error: d.last_error })),
            })),
            count: alerts.length,
          };
        },
      },
      /** Internal: deliver what is due now (tests, operators). */
      deliver: {
        visibility: 'public',
        async handler() {
          return { claimed: await scan(this.logger) };
        },
      },
    },
    started() {
      if (!cfg.webhookUrl && !cfg.alertmanagerUrl) return;
      timer = setInterval(() => {
        if (running) return;
        running = scan(this.logger)
          .catch((e) => this.logger.warn('alert delivery scan failed:', (e as Error).message))
          .finally(() => { running = null; });
      }, cfg.scanIntervalMs);
      timer.unref();
    },
    async stopped() {
      if (timer) clearInterval(timer);
      await running;
    },
  } as ServiceSchema;
}
