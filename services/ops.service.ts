/**
 * Operations (facade): delivers the alert outbox to ALERT_WEBHOOK_URL and ALERTMANAGER_URL from every node
 * running it (claims are atomic), and answers operators (`npm run operator`, the REPL): alerts, a
 * merchant's sessions, listener leases and cursors (read by lib/ops/queries.ts). Alerts are raised where
 * things happen (lib/ops/alerts), not here.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { ALERT_DELIVERIES, type AlertDeliveryDoc } from '../lib/ops/alerts/engine.ts';
import { deliverOne, deliveryLeaseMs, httpAlertSender } from '../lib/ops/alerts/delivery.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { AUDIT_EVENTS, sealRow, verifyChains } from '../lib/ops/audit-chain.ts';
import { validate } from '../lib/http/validation.ts';
import { auditLog, listAlerts, listenerStatus, merchantAuditEvents, merchantSessions } from '../lib/ops/queries.ts';

const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed'];

export function createOpsService(rt: Runtime): ServiceSchema {
  const cfg = rt.config.alerts;
  const sender = httpAlertSender(cfg);
  const auditKey = rt.keyring.derive('audit-chain/v1');
  let deliveries: DueScanner<AlertDeliveryDoc> | null = null;
  let sealer: DueScanner | null = null;

  return {
    name: 'ops',
    actions: {
      /** Alerts, newest first: `type`, `merchant_id`, `since` (ISO time), `limit` 1..500 (default 50). */
      alerts: {
        visibility: 'public',
        handler: (ctx: Context<Parameters<typeof listAlerts>[1]>) => listAlerts(rt.store, ctx.params ?? {}),
      },
      /** A merchant's sessions, newest first (`limit` 1..500, default 20): status, rail and amounts. */
      sessions: {
        visibility: 'public',
        handler: (ctx: Context<Parameters<typeof merchantSessions>[1]>) => merchantSessions(rt.store, ctx.params ?? {}),
      },
      /** Chain listener leases (who listens to which network, until when) and Ethereum cursors. */
      listeners: {
        visibility: 'public',
        handler: () => listenerStatus(rt.store, rt.config.chains, rt.now()),
      },
      /** Internal: deliver what is due now (tests, operators). */
      deliverAlerts: {
        visibility: 'public',
        async handler() {
          return { claimed: await deliveries!.scanOnce() };
        },
      },
      /** Internal: seal what is due into the audit chains now (tests, operators). */
      sealAudit: {
        visibility: 'public',
        async handler() {
          return { sealed: await sealer!.scanOnce() };
        },
      },
      /**
       * The audit log for operators, newest first: `merchant_id`, `type` (exact, or a prefix ending in
       * `.`, e.g. `payment_session.webhook.`), `since` / `until` (ISO times), `limit` 1..500 (default 50).
       */
      audit: {
        visibility: 'public',
        handler: (ctx: Context<Parameters<typeof auditLog>[1]>) => auditLog(rt.store, ctx.params ?? {}),
      },
      /** Verifies the audit hash chains (all, or one merchant's): the first broken link of each. */
      auditVerify: {
        visibility: 'public',
        async handler(ctx: Context<{ merchant_id?: string }>) {
          await sealer!.scanOnce();
          return verifyChains(rt.store, auditKey, ctx.params?.merchant_id || undefined);
        },
      },
      /** GET /v1/audit-events: the calling merchant's own audit events, newest first, paged. */
      auditEvents: {
        handler(ctx: Context<{ query?: unknown }>) {
          const caller = callingMerchant(ctx);
          return merchantAuditEvents(rt.store, caller.merchant_id, validate('AuditEventsQuery', ctx.params.query ?? {}, 'query'));
        },
      },
    },
    created() {
      deliveries = new DueScanner<AlertDeliveryDoc>({
        name: 'alert delivery',
        store: rt.store,
        coll: ALERT_DELIVERIES,
        dueField: 'next_attempt_at',
        filter: { status: 'pending' },
        leaseMs: deliveryLeaseMs(cfg.timeoutMs),
        intervalMs: cfg.scanIntervalMs,
        batch: 20,
        parallel: 5,
        now: () => rt.now(),
        handle: (row) => deliverOne(rt.store, sender, row, () => rt.now(), this.logger),
        log: this.logger,
      });
      // one row at a time: a chain is linked in order, and parallel rows of one merchant would only race
      sealer = new DueScanner({
        name: 'audit sealer',
        store: rt.store,
        coll: AUDIT_EVENTS,
        dueField: 'seal_due_at',
        leaseMs: 30_000,
        intervalMs: rt.config.audit.sealIntervalMs,
        batch: 200,
        parallel: 1,
        now: () => rt.now(),
        handle: async (row) => {
          await sealRow(rt.store, auditKey, row, rt.now());
        },
        log: this.logger,
      });
    },
    started() {
      // index (status, …): four indexed counts per scrape
      const countsOf = (coll: string) => async () =>
        Object.fromEntries(
          await Promise.all(PAYOUT_STATUSES.map(async (status) => [status, await rt.store.count(coll, { status })] as const)),
        );
      rt.metrics.payoutCounts = countsOf('payouts');
      // refunds share the payouts' statuses (lib/refunds/model.ts)
      rt.metrics.refundCounts = countsOf('refunds');
      sealer!.start();
      if (cfg.webhookUrl || cfg.alertmanagerUrl) deliveries!.start();
    },
    async stopped() {
      rt.metrics.payoutCounts = null;
      rt.metrics.refundCounts = null;
      await Promise.all([deliveries?.stop(), sealer?.stop()]);
    },
  };
}
