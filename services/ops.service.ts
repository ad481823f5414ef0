/**
 * Operations (facade): delivers the alert outbox to ALERT_WEBHOOK_URL and ALERTMANAGER_URL from every node
 * running it (claims are atomic), and answers operators (`npm run operator`, the REPL): alerts, a
 * merchant's sessions, listener leases and cursors. Alerts are raised where things happen
 * (lib/ops/alerts), not here.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { badRequest, invalidCursor, invalidLimit } from '../lib/core/errors.ts';
import { ALERT_DELIVERIES, ALERTS, type AlertDeliveryDoc, type AlertDoc } from '../lib/ops/alerts/engine.ts';
import { ALERT_TYPES, type AlertType } from '../lib/ops/alerts/rules.ts';
import { deliverOne, deliveryLeaseMs, httpAlertSender } from '../lib/ops/alerts/delivery.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { AUDIT_EVENTS, sealRow, verifyChains } from '../lib/ops/audit-chain.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../lib/catalog/rules.ts';
import { validate } from '../lib/http/validation.ts';
import type { Doc, Filter } from '../lib/store/port.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';
import { fromSubunits } from '../lib/core/money.ts';
import { LEASE_COLLECTION, type LeaseDoc } from '../lib/chains/lease.ts';
import { CURSORS } from '../lib/chains/cursor.ts';

/** What a merchant sees of its audit events: the row's own facts, not the sealer's bookkeeping. */
function presentAuditEvent(r: Doc & { type: string; created_at: string }) {
  const {
    id,
    type,
    created_at,
    seq,
    version: _v,
    seal_due_at: _s,
    sealed_at: _sa,
    chain: _c,
    hash: _h,
    prev_hash: _p,
    merchant_id: _m,
    ...details
  } = r as Record<string, unknown> & { id: string; type: string; created_at: string };
  return { id, type, created_at, seq: typeof seq === 'number' ? seq : null, details };
}

const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed'];

function limitOf(v: unknown, dflt: number): number {
  const limit = v === undefined ? dflt : Number(v);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be an integer from 1 to 500');
  return limit;
}

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
          const deliveries =
            alerts.length === 0
              ? []
              : await rt.store.find<AlertDeliveryDoc>(ALERT_DELIVERIES, { alert_id: { $in: alerts.map((a) => a.id) } });
          return {
            alerts: alerts.map((a) => ({
              ...a.payload,
              notifications: a.notifications,
              deliveries: deliveries
                .filter((d) => d.alert_id === a.id)
                .map((d) => ({ destination: d.destination, status: d.status, attempts: d.attempts, last_error: d.last_error })),
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
              session_id: s.id,
              status: s.status,
              rail: `${s.chain}:${s.network}:${s.token}`,
              demo: s.demo,
              expected: `${fromSubunits(s.expected_subunits, s.decimals)} ${s.token}`,
              received: `${fromSubunits(s.received_subunits, s.decimals)} ${s.token}`,
              deposits: s.deposits.length,
              created_at: s.created_at,
              expires_at: s.expires_at,
              completed_at: s.completed_at,
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
          const cursors = await rt.store.find<Doc & { block?: number; updated_at?: string; chain?: string; network?: string }>(CURSORS, {
            chain: 'ethereum',
          });
          const configured = (['ethereum', 'solana'] as const).flatMap((chain) =>
            (['testnet', 'mainnet'] as const)
              .filter((network) => Boolean(rt.config.chains[chain][network].rpcUrl))
              .map((network) => `${chain}:${network}`),
          );
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
        async handler(ctx: Context<{ merchant_id?: string; type?: string; since?: string; until?: string; limit?: number }>) {
          const p = ctx.params ?? {};
          const filter: Filter = {};
          if (p.merchant_id) filter.merchant_id = String(p.merchant_id);
          const prefix = typeof p.type === 'string' && p.type.endsWith('.') ? p.type : null;
          // a prefix "a.b." is the range [a.b., a.b/) ('/' follows '.'): filtered in the store, not after a capped read
          if (prefix) filter.type = { $gte: prefix, $lt: `${prefix.slice(0, -1)}/` };
          else if (p.type) filter.type = String(p.type);
          const range: { $gte?: string; $lte?: string } = {};
          for (const [k, op] of [
            ['since', '$gte'],
            ['until', '$lte'],
          ] as const) {
            if (!p[k]) continue;
            const t = Date.parse(String(p[k]));
            if (Number.isNaN(t)) throw badRequest(`${k} must be an ISO timestamp`);
            range[op] = new Date(t).toISOString();
          }
          if (range.$gte || range.$lte) filter.created_at = range;
          const limit = limitOf(p.limit, 50);
          const rows = await rt.store.find<Doc & { type: string }>(AUDIT_EVENTS, filter, { sort: 'created_at', desc: true, limit });
          return { events: rows.map(({ version: _v, seal_due_at: _s, ...r }) => r), count: rows.length };
        },
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
        async handler(ctx: Context<{ query?: unknown }>) {
          const caller = callingMerchant(ctx);
          const q = validate('AuditEventsQuery', ctx.params.query ?? {}, 'query');
          const limit = parseLimit(q.limit);
          if (typeof limit === 'string') throw invalidLimit(limit);
          const filter: Filter = { merchant_id: caller.merchant_id };
          if (q.type) filter.type = q.type;
          if (q.cursor !== undefined) {
            const after = decodeCursor(q.cursor);
            if (!after) throw invalidCursor();
            filter.id = { $lt: after };
          }
          const rows = await rt.store.find<Doc & { type: string; created_at: string }>(AUDIT_EVENTS, filter, {
            desc: true,
            limit: limit + 1,
          });
          const page = rows.slice(0, limit);
          const more = rows.length > limit;
          return { data: page.map(presentAuditEvent), has_more: more, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
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
