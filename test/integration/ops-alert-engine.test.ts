/**
 * The alert engine over a real store (SQLite) with a controlled clock: dedup within a window, re-notify
 * after the interval, a new alert after a quiet window, one alert when two engines (two nodes) cross at
 * once, the outbox row retried until the destination answers 2xx, and an alert resolved: its status, a
 * `resolved` delivery sent as `alert.<type>.resolved`, and a new alert for the next crossing of its key.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../lib/store/index.ts';
import type { Store } from '../../lib/store/port.ts';
import { loadConfig } from '../../config/index.ts';
import { ALERT_DELIVERIES, ALERTS, AlertEngine, type AlertDeliveryDoc, type AlertDoc } from '../../lib/ops/alerts/engine.ts';
import { deliverOne, httpAlertSender } from '../../lib/ops/alerts/delivery.ts';
import { tempDir } from '../helpers/node.ts';
import { startReceiver, type Receiver } from './webhooks-helpers.ts';

describe('alert engine over the store', () => {
  let dir: string;
  let store: Store;
  let rx: Receiver;
  let answer = 500;
  // near the real time: the store treats rows past expires_at (by its own clock) as absent
  let clock = Date.now();
  const now = () => new Date(clock);
  const minutes = (n: number) => {
    clock += n * 60_000;
  };
  let cfg: ReturnType<typeof loadConfig>['alerts'];

  beforeAll(async () => {
    dir = tempDir('alert-engine-');
    store = await openStore(`sqlite:${join(dir, 'db.sqlite')}`);
    rx = await startReceiver(() => answer);
    cfg = loadConfig({
      ALERT_WEBHOOK_URL: rx.url,
      ALERT_WEBHOOK_SECRET: 'a-secret-of-sixteen-chars',
      ALERT_RENOTIFY_INTERVAL: '1h',
      ALERT_ANY_WINDOW: '10m',
    }).alerts;
  });
  afterAll(async () => {
    await store.close();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const alertsOf = (mer: string) => store.find<AlertDoc>(ALERTS, { merchant_id: mer });
  const deliveriesOf = async (mer: string) => {
    const ids = (await alertsOf(mer)).map((a) => a.id);
    return (await store.find<AlertDeliveryDoc>(ALERT_DELIVERIES, {})).filter((d) => ids.includes(d.alert_id));
  };

  it('folds crossings into one alert per window, re-notifies after the interval, starts anew after a quiet window', async () => {
    const engine = new AlertEngine({ store, config: cfg, now });
    const mer = 'mer_01jdedupdedupdedupdedupde1';
    const limit = () => engine.observe({ kind: 'limit', merchant_id: mer, source: 's' }, { merchant_id: mer });
    // every 9 minutes for 63 minutes: the alert stays open; the crossing after 1 h is sent again
    for (let i = 0; i < 8; i++) {
      await limit();
      minutes(9);
    }
    let alerts = await alertsOf(mer);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].notifications).toBe(2);
    expect(await deliveriesOf(mer)).toHaveLength(2);
    // two crossings 9 minutes apart fall in one 10-minute window
    expect(alerts[0].payload.count).toBe(2);
    // quiet for more than a window: the next crossing is a new alert
    minutes(11);
    await limit();
    alerts = await alertsOf(mer);
    expect(alerts).toHaveLength(2);
    expect(new Set(alerts.map((a) => a.id)).size).toBe(2);
  });

  it('purges the dedup state of a key one window after its last crossing (keys do not pile up)', async () => {
    const engine = new AlertEngine({ store, config: cfg, now });
    const mer = 'mer_01jpurgepurgepurgepurgepu1';
    const stateId = `limit_violation|merchant:${mer}`;
    await engine.observe({ kind: 'limit', merchant_id: mer, source: 's' }, { merchant_id: mer });
    await store.purgeExpired(new Date(clock + 9 * 60_000));
    expect(await store.get('alert_state', stateId)).not.toBeNull();
    await store.purgeExpired(new Date(clock + 10 * 60_000));
    expect(await store.count('alert_state', { id: stateId })).toBe(0);
    // the next crossing opens a new alert, as it would have with the state still there
    minutes(11);
    await engine.observe({ kind: 'limit', merchant_id: mer, source: 's' }, { merchant_id: mer });
    expect(await alertsOf(mer)).toHaveLength(2);
  });

  it('two engines crossing at once raise one alert', async () => {
    const a = new AlertEngine({ store, config: cfg, now });
    const b = new AlertEngine({ store, config: cfg, now });
    const mer = 'mer_01jraceracerace0race0race1';
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).observe({ kind: 'limit', merchant_id: mer, source: 's' }, { merchant_id: mer })),
    );
    const alerts = await alertsOf(mer);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].notifications).toBe(1);
    expect(await deliveriesOf(mer)).toHaveLength(1);
  });

  it('retries a failed delivery with backoff until the destination answers 2xx', async () => {
    const mer = 'mer_01jraceracerace0race0race1';
    const [row] = await deliveriesOf(mer);
    const sender = httpAlertSender(cfg);
    answer = 500;
    await deliverOne(store, sender, row, now);
    const failed = (await store.get<AlertDeliveryDoc>(ALERT_DELIVERIES, row.id))!;
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_error: 'http_error 500' });
    expect(Date.parse(failed.next_attempt_at!)).toBeGreaterThan(clock);
    answer = 200;
    await deliverOne(store, sender, failed, now);
    expect(await store.get<AlertDeliveryDoc>(ALERT_DELIVERIES, row.id)).toMatchObject({
      status: 'delivered',
      attempts: 2,
      last_error: null,
    });
    expect(rx.received.filter((r) => r.eventId === row.id)).toHaveLength(2);
  });

  it('resolves an open alert: status and a resolved delivery in one write; the next crossing opens a new one', async () => {
    const engine = new AlertEngine({ store, config: cfg, now });
    const key = 'balance|solana:testnet||7jTQKdMiFpzhRukY55rmAh59H2MriYVGVSxjP7x7q5Ak|solana:testnet:SOL';
    const byKey = () => store.find<AlertDoc>(ALERTS, { key });
    await engine.observe({ kind: 'drift', key }, { chain: 'solana', network: 'testnet', difference: '-5' });
    minutes(1);
    await engine.observe({ kind: 'drift', key }, { chain: 'solana', network: 'testnet', difference: '-5' });
    const [open] = await byKey();
    expect(open).toMatchObject({ status: 'open', alert_type: 'reconciliation_drift' });
    const done = await engine.resolve('reconciliation_drift', key, 'acknowledged');
    expect(done.map((a) => a.id)).toEqual([open!.id]);
    expect((await byKey())[0]).toMatchObject({ status: 'resolved', resolution: 'acknowledged', resolved_at: now().toISOString() });
    // nothing open any more: resolving again changes nothing
    expect(await engine.resolve('reconciliation_drift', key, 'resolved')).toEqual([]);
    const rows = (await store.find<AlertDeliveryDoc>(ALERT_DELIVERIES, { alert_id: open!.id })).filter((d) => d.event === 'resolved');
    expect(rows).toEqual([expect.objectContaining({ destination: 'webhook', status: 'pending', ends_at: now().toISOString() })]);
    answer = 200;
    await deliverOne(store, httpAlertSender(cfg), rows[0]!, now);
    const sent = rx.received.find((r) => r.eventId === rows[0]!.id)!;
    expect(String(sent.headers['x-service-event'])).toBe('alert.reconciliation_drift.resolved');
    expect(JSON.parse(sent.raw)).toMatchObject({ alert_id: open!.id, difference: '-5' });
    // found again within the window: a new alert, the resolved one stays resolved
    minutes(1);
    await engine.observe({ kind: 'drift', key }, { chain: 'solana', network: 'testnet', difference: '-5' });
    const after = await byKey();
    expect(after).toHaveLength(2);
    expect(after.find((a) => a.id === open!.id)!.status).toBe('resolved');
    expect(after.find((a) => a.id !== open!.id)).toMatchObject({ status: 'open', notifications: 1 });
  });
});
