import fc from 'fast-check';
import {
  applyAttempt,
  applySkip,
  baseDelayMs,
  nextAttemptAt,
  presentEvent,
  RETRY_WINDOW_MULTIPLIER,
  type DeliveryDoc,
  type LoggedAttempt,
} from '../../lib/webhooks/delivery.ts';
import type { WebhookEventDoc } from '../../lib/webhooks/event.ts';
import { webhookEventOp } from '../../lib/webhooks/event.ts';

const BASE = 30_000;
const H = 3600_000;
const T0 = new Date('2030-01-01T00:00:00.000Z');
const noJitter = () => 0.5;

function row(now = T0): DeliveryDoc {
  const op = webhookEventOp({
    merchant_id: 'mer_1',
    session_id: 'ps_1',
    event_type: 'payment_session.completed',
    status: 'completed',
    amount: 1,
    currency: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    now,
  });
  return { ...(op as unknown as { doc: WebhookEventDoc }).doc, version: 1 } as DeliveryDoc;
}

const fail = (at: Date, status: number | null = 500): LoggedAttempt => ({
  at: at.toISOString(),
  status,
  latency_ms: 3,
  error: status === null ? 'connection_refused' : 'http_error',
});
const ok = (at: Date): LoggedAttempt => ({ at: at.toISOString(), status: 200, latency_ms: 3, error: null });

describe('webhook retry schedule', () => {
  it('is 30s, 1m, 2m, 5m, 10m, 30m, 1h, 2h, 4h, 8h, 12h, 24h, then 24h, at the default base', () => {
    const minutes = Array.from({ length: 14 }, (_, i) => baseDelayMs(i + 1, BASE) / 60_000);
    expect(minutes).toEqual([0.5, 1, 2, 5, 10, 30, 60, 120, 240, 480, 720, 1440, 1440, 1440]);
  });

  it('scales with the base and jitters by at most ±20 %', () => {
    expect(baseDelayMs(3, 100)).toBe(400);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (n, r) => {
        const at = nextAttemptAt(T0, n, T0, BASE, () => r)!.getTime() - T0.getTime();
        const d = baseDelayMs(n, BASE);
        expect(at).toBeGreaterThanOrEqual(Math.floor(d * 0.8));
        expect(at).toBeLessThanOrEqual(Math.ceil(d * 1.2));
      }),
    );
  });

  it('never schedules beyond 72 h after the event; at or after the end there is no next attempt', () => {
    const end = T0.getTime() + 72 * H;
    expect(RETRY_WINDOW_MULTIPLIER * BASE).toBe(72 * H);
    expect(nextAttemptAt(T0, 13, new Date(end - H), BASE, noJitter)!.getTime()).toBe(end);
    expect(nextAttemptAt(T0, 13, new Date(end), BASE, noJitter)).toBeNull();
  });

  it('a receiver that is always down gets 14 attempts over 72 h, then the event is failed', () => {
    let doc = row();
    let now = T0;
    const times: number[] = [];
    for (let i = 0; i < 50 && doc.status === 'pending'; i++) {
      times.push(now.getTime() - T0.getTime());
      const out = applyAttempt(doc, fail(now), false, now, BASE, noJitter);
      doc = out.doc;
      expect(out.audit).toBe('failed');
      if (doc.status === 'pending') {
        expect(out.final).toBe(false);
        now = new Date(doc.next_attempt_at!);
      } else {
        expect(out.final).toBe(true);
      }
    }
    expect(doc.status).toBe('failed');
    expect(doc.next_attempt_at).toBeNull();
    expect(doc.attempts).toHaveLength(14);
    expect(times[1]).toBe(30_000);
    expect(times[12]).toBe((30 + 60 + 120 + 300 + 600 + 1800) * 1000 + (1 + 2 + 4 + 8 + 12 + 24) * H);
    expect(times[13]).toBe(72 * H);
  });
});

describe('applyAttempt', () => {
  it('a 2xx delivers: status, delivered_at, no next attempt, lease cleared', () => {
    const now = new Date(T0.getTime() + 5000);
    const out = applyAttempt({ ...row(), lease_until: now.toISOString() }, ok(now), true, now, BASE);
    expect(out.audit).toBe('delivered');
    expect(out.doc).toMatchObject({ status: 'delivered', delivered_at: now.toISOString(), next_attempt_at: null, lease_until: null });
    expect(out.doc.attempts).toHaveLength(1);
  });

  it('fails first, succeeds later: delivered with two attempts in the log', () => {
    const first = applyAttempt(row(), fail(T0), false, T0, BASE, noJitter).doc;
    expect(first.status).toBe('pending');
    expect(first.next_attempt_at).toBe(new Date(T0.getTime() + 30_000).toISOString());
    const later = new Date(T0.getTime() + 30_000);
    const second = applyAttempt(first, ok(later), true, later, BASE).doc;
    expect(second.status).toBe('delivered');
    expect(second.attempts.map((a) => a.status)).toEqual([500, 200]);
  });

  it('a failed manual redelivery of a delivered or failed event leaves that status', () => {
    const delivered = applyAttempt(row(), ok(T0), true, T0, BASE).doc;
    const again = applyAttempt(delivered, { ...fail(T0), manual: true }, false, T0, BASE);
    expect(again.doc.status).toBe('delivered');
    expect(again.doc.attempts).toHaveLength(2);
    expect(again.final).toBe(false);
    const failed: DeliveryDoc = { ...row(), status: 'failed', next_attempt_at: null };
    expect(applyAttempt(failed, fail(T0), false, T0, BASE).doc).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(applyAttempt(failed, ok(T0), true, T0, BASE).doc.status).toBe('delivered');
  });

  it('manual redeliveries that fail do not move the automatic schedule on', () => {
    let doc = applyAttempt(row(), fail(T0), false, T0, BASE, noJitter).doc;
    for (let i = 0; i < 5; i++) doc = applyAttempt(doc, { ...fail(T0), manual: true }, false, T0, BASE, noJitter).doc;
    const second = applyAttempt(doc, fail(T0), false, T0, BASE, noJitter).doc;
    // the second scheduled failure waits the second delay of the schedule (1 min), not the seventh (1 h)
    expect(second.next_attempt_at).toBe(new Date(T0.getTime() + 2 * BASE).toISOString());
  });

  it('skip: no webhook_url, nothing more is scheduled', () => {
    expect(applySkip(row())).toMatchObject({ status: 'skipped', next_attempt_at: null, lease_until: null });
  });

  it('the log shows time, HTTP status, latency and error class only', () => {
    const doc = applyAttempt(row(), { ...fail(T0, 302), error: 'redirect', manual: true }, false, T0, BASE, noJitter).doc;
    const shown = presentEvent(doc);
    expect(shown).toEqual({
      event_id: doc.id,
      event_type: 'payment_session.completed',
      status: 'pending',
      body: doc.body,
      created_at: T0.toISOString(),
      delivered_at: null,
      next_attempt_at: doc.next_attempt_at,
      attempts: [{ at: T0.toISOString(), status: 302, latency_ms: 3, error: 'redirect', manual: true }],
    });
  });
});
