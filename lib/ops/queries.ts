/**
 * What operators and merchants read of operations (the ops facade answers with these): alerts with their
 * deliveries, a merchant's sessions, the chain listeners' leases and cursors, the audit log, and a
 * merchant's own audit events.
 */
import { badRequest } from '../core/errors.ts';
import { fromSubunits } from '../core/money.ts';
import type { Config } from '../../config/index.ts';
import type { Doc, Filter, Store } from '../store/port.ts';
import { pageById } from '../core/paging.ts';
import type { Checked } from '../http/contract.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';
import { LEASE_COLLECTION, type LeaseDoc } from '../chains/lease.ts';
import { CURSORS } from '../chains/cursor.ts';
import { ALERT_DELIVERIES, ALERTS, type AlertDeliveryDoc, type AlertDoc } from './alerts/engine.ts';
import { ALERT_TYPES, type AlertType } from './alerts/rules.ts';
import { AUDIT_EVENTS } from './audit-chain.ts';

function limitOf(v: unknown, dflt: number): number {
  const limit = v === undefined ? dflt : Number(v);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw badRequest('limit must be an integer from 1 to 500');
  return limit;
}

/** Alerts, newest first: `type`, `merchant_id`, `since` (ISO time), `limit` 1..500 (default 50). */
export async function listAlerts(store: Store, p: { type?: string; merchant_id?: string; since?: string; limit?: number }) {
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
  // every alert has its time: said, so that PostgreSQL pages the index in its order (store/sql/statements.ts `order`)
  filter.created_at ??= { $exists: true };
  const limit = limitOf(p.limit, 50);
  const alerts = await store.find<AlertDoc>(ALERTS, filter, { sort: 'created_at', desc: true, limit });
  const deliveries =
    alerts.length === 0 ? [] : await store.find<AlertDeliveryDoc>(ALERT_DELIVERIES, { alert_id: { $in: alerts.map((a) => a.id) } });
  return {
    alerts: alerts.map((a) => ({
      ...a.payload,
      status: a.status,
      resolution: a.resolution ?? null,
      resolved_at: a.resolved_at ?? null,
      notifications: a.notifications,
      deliveries: deliveries
        .filter((d) => d.alert_id === a.id)
        .map((d) => ({
          destination: d.destination,
          event: d.event ?? 'raised',
          status: d.status,
          attempts: d.attempts,
          last_error: d.last_error,
        })),
    })),
    count: alerts.length,
  };
}

/** A merchant's sessions, newest first (`limit` 1..500, default 20): status, rail and amounts. */
export async function merchantSessions(store: Store, p: { merchant_id?: string; status?: string; limit?: number }) {
  if (typeof p.merchant_id !== 'string' || !p.merchant_id) throw badRequest('merchant_id is required');
  const limit = limitOf(p.limit, 20);
  const filter: Filter = { merchant_id: p.merchant_id };
  if (p.status) filter.status = String(p.status);
  // newest first by id (ids sort in creation order, lib/core/ids.ts): the indexes of GET /v1/payment_sessions serve it, with a status or without
  const sessions = await store.find<PaymentSessionState>('payment_sessions', filter, { sort: 'id', desc: true, limit });
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
}

/** Chain listener leases (who listens to which network, until when) and Ethereum cursors. */
export async function listenerStatus(store: Store, chains: Config['chains'], now: Date) {
  const leases = await store.find<LeaseDoc>(LEASE_COLLECTION, {});
  const cursors = await store.find<Doc & { block?: number; updated_at?: string; chain?: string; network?: string }>(CURSORS, {
    chain: 'ethereum',
  });
  const configured = (['ethereum', 'solana'] as const).flatMap((chain) =>
    (['testnet', 'mainnet'] as const).filter((network) => Boolean(chains[chain][network].rpcUrl)).map((network) => `${chain}:${network}`),
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
}

/**
 * The audit log for operators, newest first: `merchant_id`, `type` (exact, or a prefix ending in `.`, e.g.
 * `payment_session.webhook.`), `since` / `until` (ISO times), `limit` 1..500 (default 50).
 */
export async function auditLog(store: Store, p: { merchant_id?: string; type?: string; since?: string; until?: string; limit?: number }) {
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
  // without a range, every event has its time: said, so that PostgreSQL pages the index in its order
  filter.created_at = range.$gte || range.$lte ? range : { $exists: true };
  const limit = limitOf(p.limit, 50);
  const rows = await store.find<Doc & { type: string }>(AUDIT_EVENTS, filter, { sort: 'created_at', desc: true, limit });
  return { events: rows.map(({ version: _v, seal_due_at: _s, ...r }) => r), count: rows.length };
}

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

/** GET /v1/audit-events: a merchant's own audit events, newest first, paged. */
export async function merchantAuditEvents(store: Store, merchantId: string, q: Checked<'AuditEventsQuery'>) {
  const filter: Filter = { merchant_id: merchantId };
  if (q.type) filter.type = q.type;
  return pageById<Doc & { type: string; created_at: string }, ReturnType<typeof presentAuditEvent>>(
    store,
    AUDIT_EVENTS,
    filter,
    q,
    presentAuditEvent,
  );
}
