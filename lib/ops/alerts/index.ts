/**
 * The alert engine of a node (one per Runtime) and what hook sites call. `report` never throws and never
 * delays the answer of the request that caused it by more than its store writes: an alerting failure is
 * logged, the request goes on.
 */
import type { Runtime } from '../../runtime/index.ts';
import { opsHasher } from '../hash.ts';
import { AlertEngine, type AlertDoc, type RaisedAlert, type Resolution } from './engine.ts';
import type { AlertContext } from './payload.ts';
import type { Observation } from './rules.ts';
import type { AbuseLabels } from '../../runtime/metrics.ts';
import { driftKey, type Drift } from '../../treasury/reconcile/drift.ts';

export type { AlertContext } from './payload.ts';
export type { Observation } from './rules.ts';

type Logger = { warn(...a: unknown[]): void; info?(...a: unknown[]): void };

export interface NodeAlerts {
  engine: AlertEngine;
  report(obs: Observation, ctx: AlertContext, log?: Logger): Promise<RaisedAlert[]>;
}

const engines = new WeakMap<Runtime, NodeAlerts>();

export function nodeAlerts(rt: Runtime): NodeAlerts {
  let a = engines.get(rt);
  if (a) return a;
  const engine = new AlertEngine({
    store: rt.store,
    config: rt.config.alerts,
    now: () => rt.now(),
    async merchantName(id) {
      const m = await rt.store.get<{ id: string; name?: string }>('merchants', id).catch(() => null);
      return typeof m?.name === 'string' ? m.name : null;
    },
    onRaised(r) {
      if (r.isNew) rt.metrics.alertsRaised.inc({ alert_type: r.alert.alert_type, severity: r.alert.severity });
    },
  });
  a = {
    engine,
    async report(obs, ctx, log) {
      try {
        const raised = await engine.observe(obs, ctx);
        for (const r of raised) {
          // ids, type and counts only: the payload's other fields stay in the store and the destinations
          if (r.notified)
            log?.warn(
              `alert ${r.alert.id} ${r.alert.alert_type} ${r.alert.severity} ${r.isNew ? 'raised' : 'still open'}: ${r.alert.payload.count} against ${r.alert.payload.threshold}`,
            );
        }
        return raised;
      } catch (e) {
        log?.warn('alert evaluation failed:', (e as Error).message);
        return [];
      }
    },
  };
  engines.set(rt, a);
  return a;
}

/** What moleculer-web put in ctx.meta (services/api.service.ts) and the action's params. */
interface CtxLike {
  requestID?: string | null;
  meta: unknown;
  params?: unknown;
}

/**
 * The request context of an alert from an action's ctx: route template, request id, keyed hashes of the
 * source IP, user agent and body. Credentials and the body itself are never copied; their names go to
 * `withheld` (listed in redacted_fields).
 */
export function requestContext(rt: Runtime, ctx: CtxLike, extra: AlertContext = {}): AlertContext {
  const meta = (ctx.meta ?? {}) as { client?: { ip_hash?: string; user_agent_hash?: string; route?: string; credentials?: string[] } };
  const body = (ctx.params as { body?: unknown } | undefined)?.body;
  const withheld = [...(meta.client?.credentials ?? [])];
  let bodyHash: string | null = null;
  if (body !== undefined && body !== null && body !== '') {
    withheld.push('body');
    bodyHash = opsHasher(rt.keyring).hash(typeof body === 'string' ? body : JSON.stringify(body));
  }
  return {
    route: meta.client?.route ?? null,
    request_id: ctx.requestID ?? null,
    source_ip_hash: meta.client?.ip_hash ?? null,
    user_agent_hash: meta.client?.user_agent_hash ?? null,
    body_hash: bodyHash,
    withheld,
    ...extra,
  };
}

/**
 * A limit violation from any site: the `abuse_signal_total` count and the `limit_violation` alert of the
 * merchant (or, without one, of the source). The alert is not awaited: it never delays the refusal;
 * a failure to store it is logged.
 */
export function limitViolation(
  rt: Runtime,
  labels: AbuseLabels & { signal: 'limit_violation' },
  at: {
    merchant_id: string | null;
    ctx?: CtxLike;
    session_id?: string;
    log?: Logger;
  },
): void {
  rt.metrics.signal(labels);
  const info = at.ctx ? requestContext(rt, at.ctx) : {};
  void nodeAlerts(rt).report(
    { kind: 'limit', merchant_id: at.merchant_id, source: info.source_ip_hash ?? 'unknown' },
    {
      ...info,
      merchant_id: at.merchant_id,
      environment: labels.environment,
      chain: labels.chain || null,
      network: labels.network || null,
      session_id: at.session_id ?? null,
      last_error_code: labels.outcome,
    },
    at.log,
  );
}

/**
 * A drift between the books and the chain (lib/treasury/reconcile): the `reconciliation_drift` alert of
 * its row, address and asset, with the difference. Raised again on every run that still finds it (the
 * open alert goes on, re-notified once per ALERT_RENOTIFY_INTERVAL).
 */
export function reconciliationDrift(rt: Runtime, d: Drift, log?: Logger): Promise<RaisedAlert[]> {
  return nodeAlerts(rt).report(
    { kind: 'drift', key: driftKey(d) },
    {
      merchant_id: d.merchant_id ?? null,
      chain: d.chain,
      network: d.network,
      row: d.row,
      address: d.address,
      asset: d.asset,
      difference: d.difference,
      last_error_code: d.code,
    },
    log,
  );
}

/**
 * A drift that ended: no longer found by a run (`resolved`), or acknowledged by an operator: its open
 * `reconciliation_drift` alert resolves (stored, Alertmanager, webhook). Never throws: a failure is logged
 * and the next run that resolves nothing leaves the alert to end by itself in Alertmanager.
 */
export async function resolveReconciliationDrift(rt: Runtime, d: Drift, resolution: Resolution, log?: Logger): Promise<AlertDoc[]> {
  try {
    const done = await nodeAlerts(rt).engine.resolve('reconciliation_drift', driftKey(d), resolution);
    for (const a of done) log?.info?.(`alert ${a.id} reconciliation_drift ${resolution}`);
    return done;
  } catch (e) {
    log?.warn('alert resolution failed:', (e as Error).message);
    return [];
  }
}

/**
 * A merchant's money-out request refused by a limit (payouts, refunds): `limitViolation` with the labels
 * of that merchant's environment and the rail the request named.
 */
export function merchantLimitViolation(
  rt: Runtime,
  m: { id: string; sandbox: boolean },
  outcome: AbuseLabels['outcome'],
  rail: { chain: string; network: string; token?: string },
): void {
  limitViolation(
    rt,
    {
      signal: 'limit_violation',
      outcome,
      environment: m.sandbox ? 'sandbox' : 'live',
      chain: rail.chain as AbuseLabels['chain'],
      network: rail.network as AbuseLabels['network'],
      token: rail.token as AbuseLabels['token'],
    },
    { merchant_id: m.id },
  );
}
