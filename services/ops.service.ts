/**
 * Operations (facade): delivers the alert outbox to ALERT_WEBHOOK_URL and ALERTMANAGER_URL from every node
 * running it (claims are atomic), and answers operators (`npm run operator`, the REPL): alerts, a
 * merchant's sessions, listener leases and cursors. Alerts are raised where things happen
 * (lib/ops/alerts), not here.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { badRequest } from '../lib/core/errors.ts';
import { ALERT_DELIVERIES, ALERTS, type AlertDeliveryDoc, type AlertDoc } from '../lib/ops/alerts/engine.ts';
import { ALERT_TYPES, type AlertType } from '../lib/ops/alerts/rules.ts';
import { deliverDue, httpAlertSender } from '../lib/ops/alerts/delivery.ts';
import type { Doc, Filter } from '../lib/store/port.ts';
import type { PaymentSessionState } from '../actors/payment-session.ts';
import { fromSubunits } from '../lib/core/money.ts';
import { LEASE_COLLECTION, type LeaseDoc } from '../lib/chains/lease.ts';
import { CURSORS } from '../lib/chains/cursor.ts';

function limitOf(v: unknown, dflt: number): number {
  const limit = v === undefined ? dflt : Number(v);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be an integer from 1 to 500');
  return limit;
}

export function createOpsService(rt: Runtime): ServiceSchema {
  const cfg = rt.config.alerts;
  const sender = httpAlertSender(cfg);
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  const scan = (logger: { warn(...a: unknown[]): void }) =>
    deliverDue(rt.store, sender, () => rt.now(), { timeoutMs: cfg.timeoutMs, log: logger });

  return {
    name: 'ops',
    actions: {
      /** Alerts, newest first: `type`, `merchant_id`, `since` (ISO time), `limit` 1..500 (default 50). */
      alerts: {
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
          const limit = limitOf(p.limit, 50);
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
      /** A merchant's sessions, newest first (`limit` 1..500, default 20): status, rail and amounts. */
      sessions: {
        visibility: 'public',
        async handler(ctx: Context<{ merchant_id: string; status?: string; limit?: number }>) {
          const p = ctx.params ?? ({} as { merchant_id: string });
          if (typeof p.merchant_id !== 'string' || !p.merchant_id) throw badRequest('merchant_id is required');
          const limit = limitOf(p.limit, 20);
          const filter: Filter = { merchant_id: p.merchant_id };
          if (p.status) filter.status = String(p.status);
          const sessions = await rt.store.find<PaymentSessionState>('payment_sessions', filter, { sort: 'created_at', desc: true, limit });
          return {
            sessions: sessions.map((s) => ({
              session_id: s.id, status: s.status, rail: `${s.chain}:${s.network}:${s.token}`, demo: s.demo,
              expected: `${fromSubunits(s.expected_subunits, s.decimals)} ${s.token}`, received: `${fromSubunits(s.received_subunits, s.decimals)} ${s.token}`,
              deposits: s.deposits.length, created_at: s.created_at, expires_at: s.expires_at, completed_at: s.completed_at,
            })),
            count: sessions.length,
          };
        },
      },
      /** Chain listener leases (who listens to which network, until when) and Ethereum cursors. */
      listeners: {
        visibility: 'public',
        async handler() {
          const now = rt.now();
          const leases = await rt.store.find<LeaseDoc>(LEASE_COLLECTION, {});
          const cursors = await rt.store.find<Doc & { block?: number; updated_at?: string; chain?: string; network?: string }>(CURSORS, { chain: 'ethereum' });
          const configured = (['ethereum', 'solana'] as const).flatMap((chain) => (['testnet', 'mainnet'] as const)
            .filter((network) => Boolean(rt.config.chains[chain][network].rpcUrl)).map((network) => `${chain}:${network}`));
          return {
            listeners: configured.map((id) => {
              const lease = leases.find((l) => l.id === id);
              const cursor = cursors.find((c) => c.id === id);
              const held = lease !== undefined && Date.parse(lease.expires_at) > now.getTime();
              return {
                listener: id,
                held,
                holder: held ? lease!.owner : null,
                lease_expires_at: lease?.expires_at ?? null,
                renewed_at: lease?.renewed_at ?? null,
                ...(cursor ? { cursor_block: cursor.block ?? null, cursor_updated_at: cursor.updated_at ?? null } : {}),
              };
            }),
          };
        },
      },
      /** Internal: deliver what is due now (tests, operators). */
      deliverAlerts: {
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
