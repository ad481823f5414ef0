/** Alert rules, payload allowlist and delivery formats (pure parts of lib/ops/alerts). */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { loadConfig } from '../../config/index.ts';
import { exceeds, plan, renotifyDue, sameAlert, SEVERITY, ALERT_TYPES } from '../../lib/ops/alerts/rules.ts';
import { ALERT_PAYLOAD_FIELDS, buildAlertPayload, looksSecret } from '../../lib/ops/alerts/payload.ts';
import { alertmanagerBody, nextAttemptAt } from '../../lib/ops/alerts/delivery.ts';
import { KeyedHasher } from '../../lib/ops/hash.ts';

const cfg = loadConfig({}).alerts;
const base = {
  alert_id: 'alt_01jabcdefghjkmnpqrstvwxyz0',
  alert_type: 'limit_violation' as const,
  severity: 'P3' as const,
  window_start: '2026-01-01T00:00:00.000Z',
  window_end: '2026-01-01T00:10:00.000Z',
  count: 1,
  threshold: 0,
};

describe('alert rules', () => {
  it('has the spec starter thresholds by default', () => {
    expect(cfg.registrations).toEqual({ count: 10, windowMs: 600_000 });
    expect(cfg.failedRegistrations).toEqual({ count: 5, windowMs: 300_000 });
    expect(cfg.webhookFailures).toEqual({ count: 20, windowMs: 600_000 });
    expect(cfg.webhookFailureRate).toEqual({ count: 50, windowMs: 900_000 });
    expect(cfg.simulateCalls).toEqual({ count: 10, windowMs: 600_000 });
  });

  it('reads thresholds from the environment and refuses nonsense', () => {
    expect(loadConfig({ ALERT_REGISTRATION_SPIKE: '3/1m' }).alerts.registrations).toEqual({ count: 3, windowMs: 60_000 });
    expect(() => loadConfig({ ALERT_REGISTRATION_SPIKE: 'ten' })).toThrow(/ALERT_REGISTRATION_SPIKE/);
    expect(() => loadConfig({ ALERT_WEBHOOK_FAILURE_RATE: '150/15m' })).toThrow(/percentage/);
    expect(() => loadConfig({ ALERT_WEBHOOK_URL: 'https://ops.example/alerts' })).toThrow(/ALERT_WEBHOOK_SECRET/);
  });

  it('documents one severity per type', () => {
    for (const t of ALERT_TYPES) expect(['P1', 'P2', 'P3']).toContain(SEVERITY[t]);
  });

  it('counts strictly above the threshold ("more than")', () => {
    const [check] = plan({ kind: 'registration', ok: true, source: 'abc' }, cfg).checks;
    expect(exceeds(check, 10)).toBe(false);
    expect(exceeds(check, 11)).toBe(true);
    const limit = plan({ kind: 'limit', merchant_id: 'mer_x', source: 's' }, cfg).checks[0];
    expect(exceeds(limit, 0)).toBe(false);
    expect(exceeds(limit, 1)).toBe(true);
  });

  it('rates need the minimum attempts and more than the percentage', () => {
    const rate = plan({ kind: 'webhook_attempt', ok: false, merchant_id: 'mer_x' }, cfg).checks.find((c) => c.mode === 'rate')!;
    expect(exceeds(rate, 9, 9)).toBe(false); // below min attempts
    expect(exceeds(rate, 5, 10)).toBe(false); // exactly 50%
    expect(exceeds(rate, 6, 11)).toBe(true);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 10, max: 1000 }), (f, t) => {
        fc.pre(f <= t);
        expect(exceeds(rate, f, t)).toBe(f * 2 > t);
      }),
    );
  });

  it('keys each type by its subject', () => {
    expect(plan({ kind: 'registration', ok: true, source: 's1', agent_id: 'u1' }, cfg).checks.map((c) => c.key)).toEqual([
      'source:s1',
      'agent:u1',
    ]);
    expect(plan({ kind: 'simulate', merchant_id: 'demo', session_id: 'ps_1', non_demo: false }, cfg).checks.map((c) => c.key)).toEqual([
      'session:ps_1',
    ]);
    expect(
      plan({ kind: 'simulate', merchant_id: 'mer_1', session_id: 'ps_1', non_demo: true }, cfg).checks.map((c) => `${c.rule}:${c.key}`),
    ).toEqual(['simulate_calls:merchant:mer_1', 'simulate_calls:merchant:mer_1', 'non_demo_simulate:merchant:mer_1']);
    expect(plan({ kind: 'webhook_attempt', ok: true, merchant_id: 'mer_1' }, cfg).checks).toEqual([]);
  });

  it('dedups within a window and re-notifies after the interval', () => {
    const now = new Date('2026-01-01T01:00:00Z');
    expect(sameAlert('2026-01-01T00:55:00Z', now, 600_000)).toBe(true);
    expect(sameAlert('2026-01-01T00:50:00Z', now, 600_000)).toBe(false);
    expect(renotifyDue('2026-01-01T00:00:00Z', now, 3_600_000)).toBe(true);
    expect(renotifyDue('2026-01-01T00:00:01Z', now, 3_600_000)).toBe(false);
  });
});

describe('alert payload', () => {
  it('has exactly the spec fields', () => {
    const p = buildAlertPayload(base, {
      merchant_id: 'mer_01jabcdefghjkmnpqrstvwxyz0',
      route: 'POST /v1/payment_sessions',
      extra: 'x',
    } as never);
    expect(Object.keys(p).sort()).toEqual([...ALERT_PAYLOAD_FIELDS].sort());
    expect(p.merchant_id).toBe('mer_01jabcdefghjkmnpqrstvwxyz0');
    expect(p.route).toBe('POST /v1/payment_sessions');
  });

  const secrets = [
    'service_sk_test_abcdefghijklmnopqrstuvwxyz012345',
    'whsec_abcdefghijklmnopqrstuvwxyz0123456789',
    't=1700000000,v1=' + 'a'.repeat(64),
    'abandon ability able about above absent absorb abstract absurd abuse access accident',
    '0x' + 'ab'.repeat(32),
    'Bearer usr_abcdefghijklmnopqrstuvwxyz0123',
  ];

  it("leaves out values that are not of their field's shape or look like secrets, naming them", () => {
    for (const secret of secrets) {
      const p = buildAlertPayload(base, {
        merchant_id: secret,
        merchant_name: secret,
        session_id: secret,
        route: secret,
        last_error_code: secret,
        request_id: secret,
        body_hash: secret,
        agent_id: secret,
      });
      expect(JSON.stringify(p)).not.toContain(secret);
      expect(p.redacted_fields).toEqual(
        expect.arrayContaining([
          'merchant_id',
          'merchant_name',
          'session_id',
          'route',
          'last_error_code',
          'request_id',
          'body_hash',
          'agent_id',
        ]),
      );
      expect(looksSecret(secret)).toBe(true);
    }
  });

  it('never carries any string it was given in a field that does not allow it (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 8 }),
        fc.constantFrom('merchant_id', 'session_id', 'delivery_id', 'route', 'chain', 'last_error_code', 'source_ip_hash'),
        (value, field) => {
          const p = buildAlertPayload(base, { [field]: value });
          const kept = (p as unknown as Record<string, unknown>)[field];
          expect(kept === null || kept === value).toBe(true);
          expect(Object.keys(p).length).toBe(ALERT_PAYLOAD_FIELDS.length);
        },
      ),
    );
  });

  it('keyed hashes differ per key and are not a plain SHA-256', () => {
    const a = new KeyedHasher(Buffer.alloc(32, 1)).hash('10.0.0.1');
    const b = new KeyedHasher(Buffer.alloc(32, 2)).hash('10.0.0.1');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
    expect(createHash('sha256').update('10.0.0.1').digest('hex')).not.toContain(a);
  });
});

describe('alert delivery formats', () => {
  it('Alertmanager v2: labels of low cardinality, the rest as annotations, endsAt after the window', () => {
    const p = buildAlertPayload(base, { merchant_id: 'mer_01jabcdefghjkmnpqrstvwxyz0', environment: 'sandbox' });
    const [a] = alertmanagerBody(p, 3_600_000) as Array<{
      labels: Record<string, string>;
      annotations: Record<string, string>;
      endsAt: string;
    }>;
    expect(a.labels).toEqual({
      alertname: 'limit_violation',
      alert_type: 'limit_violation',
      severity: 'P3',
      service: 'stablecoin-payment-service',
      alert_id: base.alert_id,
      environment: 'sandbox',
    });
    expect(a.annotations.merchant_id).toBe('mer_01jabcdefghjkmnpqrstvwxyz0');
    expect(a.endsAt).toBe('2026-01-01T01:10:00.000Z');
  });

  it('backs off and gives up after a day', () => {
    const created = '2026-01-01T00:00:00.000Z';
    expect(nextAttemptAt({ created_at: created, attempts: 1 }, new Date(created))).toBe('2026-01-01T00:00:10.000Z');
    expect(nextAttemptAt({ created_at: created, attempts: 30 }, new Date('2026-01-01T23:30:00Z'))).toBeNull();
  });
});
