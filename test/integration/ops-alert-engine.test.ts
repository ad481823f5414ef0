/**
 * The alert engine over a real store (SQLite) with a controlled clock: dedup within a window, re-notify
 * after the interval, a new alert after a quiet window, one alert when two engines (two nodes) cross at
 * once, and the outbox row retried until the destination answers 2xx.
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
});
