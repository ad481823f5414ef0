/**
 * The four alert types of the spec as data: which observations feed which sliding-window counters, and
 * when a window's count raises an alert. Pure: the engine (engine.ts) keeps the counters in the store, so
 * every node of a cluster counts into the same windows.
 *
 * Starter thresholds (spec, "Monitoring starter thresholds"; each configurable, config/index.ts):
 *   registration_spike    more than 10 successful registrations in 10 min from one source or agent,
 *                         or more than 5 failed registrations in 5 min from one source
 *   failed_webhook_flood  more than 20 failed attempts in 10 min for one merchant, or a failure rate
 *                         above 50% over 15 min (once at least ALERT_WEBHOOK_RATE_MIN_ATTEMPTS attempts
 *                         were made in it: one failed attempt alone is not a flood)
 *   simulation_abuse      any simulate on a non-demo session that is refused (blocked_non_demo), or more
 *                         than 10 simulate calls in 10 min per merchant or per session
 *   limit_violation       any request above a cap (amount, daily volume, rate limit) or any mainnet
 *                         attempt while gated (sandbox or no KYC)
 *   reconciliation_drift  any drift between the books and the chain (lib/treasury/reconcile): one alert per
 *                         row, address and asset, kept open while reconciliation keeps finding it
 */
import type { AlertsConfig, WindowThreshold } from '../../../config/index.ts';

export type AlertType = 'registration_spike' | 'failed_webhook_flood' | 'simulation_abuse' | 'limit_violation' | 'reconciliation_drift';
export const ALERT_TYPES: AlertType[] = [
  'registration_spike',
  'failed_webhook_flood',
  'simulation_abuse',
  'limit_violation',
  'reconciliation_drift',
];
export type Severity = 'P1' | 'P2' | 'P3';

/**
 * P1: page now (automated abuse of onboarding mints credentials at scale; books and chain disagree:
 * money may be leaving); P2: act within hours (a merchant's payment notifications are not arriving); P3:
 * review (blocked probing, requests refused by a limit: nothing got through).
 */
export const SEVERITY: Record<AlertType, Severity> = {
  registration_spike: 'P1',
  reconciliation_drift: 'P1',
  failed_webhook_flood: 'P2',
  simulation_abuse: 'P3',
  limit_violation: 'P3',
};

/** What a hook site reports. Subjects are ids or keyed hashes, never raw IPs or secrets. */
export type Observation =
  | { kind: 'registration'; ok: boolean; source: string; agent_id?: string | null }
  | { kind: 'webhook_attempt'; ok: boolean; merchant_id: string }
  | { kind: 'simulate'; merchant_id: string | null; session_id: string; non_demo: boolean }
  | { kind: 'limit'; merchant_id: string | null; source: string }
  /** a reconciliation drift; key names its row, address and asset */
  | { kind: 'drift'; key: string };

export interface Check {
  type: AlertType;
  /** the dedup subject: one alert per type and key per window */
  key: string;
  /** rule name, for logs and tests */
  rule: string;
  /** count: `counter` > threshold; rate: failures*100 > threshold*attempts (attempts >= minAttempts) */
  mode: 'count' | 'rate';
  counter: string;
  /** rate mode: the counter of all attempts */
  total?: string;
  minTotal?: number;
  threshold: number;
  windowMs: number;
}

export interface Plan {
  /** counters to add one event to, with the longest window they are read over */
  events: Array<{ counter: string; keepMs: number }>;
  checks: Check[];
}

const count = (type: AlertType, rule: string, key: string, counter: string, t: WindowThreshold): Check => ({
  type,
  rule,
  key,
  mode: 'count',
  counter,
  threshold: t.count,
  windowMs: t.windowMs,
});

/** The counters an observation feeds and the checks it triggers. */
export function plan(obs: Observation, cfg: AlertsConfig): Plan {
  const any = { count: 0, windowMs: cfg.anyWindowMs };
  switch (obs.kind) {
    case 'registration': {
      if (!obs.ok) {
        const c = `reg_fail:src:${obs.source}`;
        return {
          events: [{ counter: c, keepMs: cfg.failedRegistrations.windowMs }],
          checks: [count('registration_spike', 'failed_registrations', `source:${obs.source}`, c, cfg.failedRegistrations)],
        };
      }
      const bySource = `reg_ok:src:${obs.source}`;
      const p: Plan = {
        events: [{ counter: bySource, keepMs: cfg.registrations.windowMs }],
        checks: [count('registration_spike', 'registrations', `source:${obs.source}`, bySource, cfg.registrations)],
      };
      if (obs.agent_id) {
        const byAgent = `reg_ok:agent:${obs.agent_id}`;
        p.events.push({ counter: byAgent, keepMs: cfg.registrations.windowMs });
        p.checks.push(count('registration_spike', 'registrations', `agent:${obs.agent_id}`, byAgent, cfg.registrations));
      }
      return p;
    }
    case 'webhook_attempt': {
      const attempts = `wh_att:${obs.merchant_id}`;
      const failures = `wh_fail:${obs.merchant_id}`;
      const keep = Math.max(cfg.webhookFailures.windowMs, cfg.webhookFailureRate.windowMs);
      const events = [{ counter: attempts, keepMs: keep }];
      if (obs.ok) return { events, checks: [] };
      events.push({ counter: failures, keepMs: keep });
      const key = `merchant:${obs.merchant_id}`;
      return {
        events,
        checks: [
          count('failed_webhook_flood', 'failures', key, failures, cfg.webhookFailures),
          {
            type: 'failed_webhook_flood',
            rule: 'failure_rate',
            key,
            mode: 'rate',
            counter: failures,
            total: attempts,
            minTotal: cfg.webhookRateMinAttempts,
            threshold: cfg.webhookFailureRate.count,
            windowMs: cfg.webhookFailureRate.windowMs,
          },
        ],
      };
    }
    case 'simulate': {
      const p: Plan = { events: [], checks: [] };
      const bySession = `sim:ses:${obs.session_id}`;
      p.events.push({ counter: bySession, keepMs: cfg.simulateCalls.windowMs });
      // demo sessions all belong to the pseudo-merchant "demo": counted per session only
      const merchant = obs.merchant_id && obs.merchant_id !== 'demo' ? obs.merchant_id : null;
      const key = merchant ? `merchant:${merchant}` : `session:${obs.session_id}`;
      if (merchant) {
        const byMerchant = `sim:mer:${merchant}`;
        p.events.push({ counter: byMerchant, keepMs: cfg.simulateCalls.windowMs });
        p.checks.push(count('simulation_abuse', 'simulate_calls', key, byMerchant, cfg.simulateCalls));
      }
      p.checks.push(count('simulation_abuse', 'simulate_calls', key, bySession, cfg.simulateCalls));
      if (obs.non_demo) {
        const c = `sim_nd:${key}`;
        p.events.push({ counter: c, keepMs: cfg.anyWindowMs });
        p.checks.push(count('simulation_abuse', 'non_demo_simulate', key, c, any));
      }
      return p;
    }
    case 'limit': {
      const key = obs.merchant_id ? `merchant:${obs.merchant_id}` : `source:${obs.source}`;
      const c = `limit:${key}`;
      return { events: [{ counter: c, keepMs: cfg.anyWindowMs }], checks: [count('limit_violation', 'limit', key, c, any)] };
    }
    case 'drift': {
      const c = `drift:${obs.key}`;
      return {
        events: [{ counter: c, keepMs: cfg.anyWindowMs }],
        checks: [count('reconciliation_drift', 'drift', obs.key, c, any)],
      };
    }
  }
}

/** Whether a window's counts cross the check's threshold (strictly above: "more than"). */
export function exceeds(check: Check, counted: number, total = 0): boolean {
  if (check.mode === 'count') return counted > check.threshold;
  if (total < (check.minTotal ?? 1)) return false;
  return counted * 100 > check.threshold * total;
}

/** Re-notification of an open alert is due. */
export function renotifyDue(lastNotifiedAt: string, now: Date, renotifyMs: number): boolean {
  return now.getTime() - Date.parse(lastNotifiedAt) >= renotifyMs;
}

/** The same alert goes on while its key keeps crossing within one window of its last crossing. */
export function sameAlert(lastSeenAt: string, now: Date, windowMs: number): boolean {
  return now.getTime() - Date.parse(lastSeenAt) < windowMs;
}
