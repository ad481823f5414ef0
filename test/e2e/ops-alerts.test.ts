/**
 * Operational alerts on two nodes (separate processes, `node index.ts`) over a real NATS server, sharing
 * one store: each alert type is raised through HTTP at its threshold and not one request below it, with
 * requests spread over both nodes (the windows live in the store). Alerts arrive signed at
 * ALERT_WEBHOOK_URL and in a real Alertmanager. Every kind of secret the spec names is planted in the
 * requests that raise them and is found in no alert, delivery, audit row, log line or /metrics output.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { ensureNats } from '../helpers/nats.ts';
import { freshDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { http, tempDir } from '../helpers/node.ts';
import { spawnNode, type ChildNode } from '../helpers/child-node.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { startAlertmanager, type Alertmanager } from '../helpers/alertmanager.ts';
import { eventually } from '../helpers/wait.ts';
import { postFrom } from '../helpers/post-from.ts';
import { solvePow } from '../../lib/onboarding/pow.ts';
import { openStore } from '../../lib/store/index.ts';
import type { Store } from '../../lib/store/port.ts';
import { startReceiver, type Receiver } from '../integration/webhooks-helpers.ts';
import { computeSignature, parseSignatureHeader } from '../../lib/webhooks/signature.ts';
import type { AlertDoc } from '../../lib/ops/alerts/engine.ts';

jest.setTimeout(600_000);

const ETH = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' };
const ETH_MAIN = { methodID: 0, chain: 'ethereum', network: 'mainnet', token: 'USDC' };
const ALERT_SECRET = `alertsecret-${randomBytes(12).toString('hex')}`;

describe('operational alerts on two nodes over NATS', () => {
  let dir: string;
  let db: TestDatabase;
  let a: ChildNode;
  let b: ChildNode;
  let store: Store;
  let smtp: SmtpReceiver;
  let am: Alertmanager;
  let alertRx: Receiver;
  let hooks: Receiver;
  let seq = 0;
  const nodes = () => [a, b];
  const pick = (i: number) => nodes()[i % 2];
  const registered: Array<{ id: string; apiKey: string; webhookSecret: string }> = [];
  const planted: string[] = [];

  /** the four-step registration; the final POST from `source` */
  async function register(i: number, opts: { source?: string; webhook_url?: string; name?: string } = {}) {
    const node = pick(i);
    const email = `ops${Date.now()}${seq++}@trusted.test`;
    const start = await http(node.url, 'POST', '/v1/merchants/email-verification', { body: { email } });
    const intent = start.body.registration_intent_id;
    const code = await smtp.waitForCode(email, 60_000);
    await http(pick(i + 1).url, 'POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code } });
    const pow = (await http(node.url, 'POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } }))
      .body;
    const body: Record<string, unknown> = {
      name: opts.name ?? 'Ops Shop',
      sandbox: true,
      registration_intent_id: intent,
      proof_of_work_challenge_id: pow.challenge_id,
      proof_of_work_nonce: solvePow(pow.challenge, pow.difficulty),
      ...(opts.webhook_url ? { webhook_url: opts.webhook_url } : {}),
    };
    const res = await postFrom(pick(i + 1).url, '/v1/merchants', body, opts.source ?? '127.0.0.1');
    if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
    const m = JSON.parse(res.text);
    registered.push({ id: m.id, apiKey: m.api_key, webhookSecret: m.webhook_secret });
    return { id: m.id as string, apiKey: m.api_key as string, webhookSecret: m.webhook_secret as string };
  }

  const alertsOf = async (type: string, key?: string) =>
    (await store.find<AlertDoc>('alerts', { alert_type: type })).filter((x) => key === undefined || x.key === key);

  beforeAll(async () => {
    const nats = await ensureNats();
    [smtp, am, alertRx] = await Promise.all([startSmtpReceiver(), startAlertmanager(), startReceiver(() => 200)]);
    const served = new Map<string, number>();
    hooks = await startReceiver((req) => {
      const n = (served.get(req.path) ?? 0) + 1;
      served.set(req.path, n);
      if (req.path === '/fail') return 500;
      if (req.path === '/rate') return n <= 15 ? 200 : 503;
      return 200;
    });
    dir = tempDir('ops-alerts-');
    db = await freshDatabase('ops_alerts');
    const env = {
      TRANSPORTER: nats,
      NAMESPACE: `ops-${randomBytes(4).toString('hex')}`,
      DATA_DIR: dir,
      STORE_URL: db.url,
      SMTP_URL: smtp.url,
      TRUSTED_EMAIL_DOMAINS: 'trusted.test',
      PUBLIC_RATE_LIMIT_PER_MINUTE: '10000',
      RATE_LIMIT_PER_MINUTE: '10000',
      SERVICES: 'api,discovery,merchants,merchant-actors,operators,housekeeping,webhooks,sessions,session-actors,ops',
      SESSION_AMOUNT_LIMIT: '1000',
      // a mainnet rail exists (no listener runs here), so a gated mainnet attempt is a limit violation
      ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9',
      WEBHOOK_RETRY_BASE_MS: '3600000',
      WEBHOOK_SCAN_INTERVAL_MS: '200',
      ALERT_WEBHOOK_RATE_MIN_ATTEMPTS: '30',
      ALERT_WEBHOOK_URL: alertRx.url,
      ALERT_WEBHOOK_SECRET: ALERT_SECRET,
      ALERTMANAGER_URL: am.url,
      ALERT_SCAN_INTERVAL_MS: '200',
    };
    a = await spawnNode({ ...env, NODE_ID: `ops-a-${randomBytes(3).toString('hex')}` });
    b = await spawnNode({ ...env, NODE_ID: `ops-b-${randomBytes(3).toString('hex')}` });
    store = await openStore(env.STORE_URL);
    // both nodes answer for every service: wait until each sees the other
    await eventually(
      'the nodes to see each other',
      async () => {
        const r = await http(b.url, 'POST', '/v1/payment_sessions/demo', { body: {} });
        return r.status === 201;
      },
      60_000,
      200,
    );
  });

  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((n) => n.stop()));
    await store?.close();
    await db?.drop();
    await Promise.all([smtp?.stop(), am?.stop(), alertRx?.close(), hooks?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('registration_spike: the 11th successful registration from one source in 10 minutes, not the 10th', async () => {
    for (let i = 0; i < 10; i++) await register(i, { source: '127.0.0.2' });
    const before = (await alertsOf('registration_spike')).filter((x) => x.rule === 'registrations');
    expect(before).toHaveLength(0);
    await register(10, { source: '127.0.0.2' });
    const [alert] = (await alertsOf('registration_spike')).filter((x) => x.rule === 'registrations');
    expect(alert.payload).toMatchObject({
      alert_type: 'registration_spike',
      severity: 'P1',
      count: 11,
      threshold: 10,
      route: 'POST /v1/merchants',
    });
    expect(alert.payload.source_ip_hash).toMatch(/^[0-9a-f]{32}$/);
  });

  it('registration_spike: the 6th failed registration from one source in 5 minutes, not the 5th; secrets in them go nowhere', async () => {
    const bodies = (i: number) => ({
      name: `Shop ${i}`,
      sandbox: true,
      registration_intent_id: `ri_${randomBytes(13).toString('hex')}`,
    });
    for (let i = 0; i < 5; i++) {
      const r = await postFrom(pick(i).url, '/v1/merchants', bodies(i), '127.0.0.3');
      expect(r.status).toBe(400);
    }
    expect((await alertsOf('registration_spike')).filter((x) => x.rule === 'failed_registrations')).toHaveLength(0);
    const token = `usr_${randomBytes(24).toString('base64url')}`;
    const marker = `raw-body-marker-${randomBytes(8).toString('hex')}`;
    const seed = 'abandon ability able about above absent absorb abstract absurd abuse access accident';
    planted.push(token, marker, seed);
    const r = await postFrom(
      b.url,
      '/v1/merchants',
      { ...bodies(6), name: `${marker} ${seed}`, private_key: `0x${randomBytes(32).toString('hex')}` },
      '127.0.0.3',
      { Authorization: `Bearer ${token}` },
    );
    expect([400, 401]).toContain(r.status);
    if (r.status === 401) {
      // the bearer is checked first: one more plain failure from the same source crosses the threshold
      const again = await postFrom(a.url, '/v1/merchants', { ...bodies(7), name: marker }, '127.0.0.3');
      expect(again.status).toBe(400);
    }
    const [alert] = (await alertsOf('registration_spike')).filter((x) => x.rule === 'failed_registrations');
    expect(alert.payload).toMatchObject({ count: 6, threshold: 5, route: 'POST /v1/merchants' });
    expect(alert.payload.redacted_fields).toContain('body');
  });

  it('limit_violation: a request above the amount cap or a gated mainnet attempt, not a request at the cap', async () => {
    const m = await register(20);
    const privateKey = `0x${randomBytes(32).toString('hex')}`;
    const signature = `t=${Math.floor(Date.now() / 1000)},v1=${computeSignature(1, 'x', m.webhookSecret)}`;
    const fakeKey = `service_sk_test_${randomBytes(24).toString('base64url')}`;
    const marker = `raw-body-marker-${randomBytes(8).toString('hex')}`;
    const seed = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
    planted.push(privateKey, signature, fakeKey, marker, seed);
    const atCap = await http(a.url, 'POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 1000, expires_in: '1h', paymentMethod: ETH },
    });
    expect(atCap.status).toBe(201);
    expect(await alertsOf('limit_violation', `merchant:${m.id}`)).toHaveLength(0);
    const metadata = {
      note: marker,
      webhook_secret: m.webhookSecret,
      private_key: privateKey,
      signature,
      api_key: fakeKey,
      seed_phrase: seed,
    };
    const over = await http(b.url, 'POST', '/v1/payment_sessions', {
      key: m.apiKey,
      headers: { 'X-Service-Signature': signature },
      body: { amount: 1000.5, expires_in: '1h', paymentMethod: ETH, metadata },
    });
    expect(over.status).toBe(400);
    const [alert] = await alertsOf('limit_violation', `merchant:${m.id}`);
    expect(alert.payload).toMatchObject({
      severity: 'P3',
      merchant_id: m.id,
      last_error_code: 'amount_limit_exceeded',
      chain: 'ethereum',
      network: 'testnet',
      environment: 'sandbox',
    });
    expect(alert.payload.redacted_fields).toEqual(expect.arrayContaining(['body', 'headers.x-api-key']));

    const m2 = await register(21);
    const mainnet = await http(a.url, 'POST', '/v1/payment_sessions', {
      key: m2.apiKey,
      body: { amount: 1, expires_in: '1h', paymentMethod: ETH_MAIN, metadata },
    });
    expect(mainnet.status).toBe(403);
    const [gated] = await alertsOf('limit_violation', `merchant:${m2.id}`);
    expect(gated.payload).toMatchObject({ last_error_code: 'mainnet_kyc_required', network: 'mainnet' });
  });

  it('simulation_abuse: any refused simulate on a non-demo session; the 11th simulate on one session', async () => {
    const m = await register(30);
    const s = (
      await http(a.url, 'POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    expect((await http(b.url, 'POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    expect(await alertsOf('simulation_abuse', `merchant:${m.id}`)).toHaveLength(0);
    const s2 = (
      await http(a.url, 'POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 1, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    // anonymous: answered as unknown (404), still a simulate on a non-demo session
    const token = `usr_${randomBytes(24).toString('base64url')}`;
    const signature = `t=1,v1=${randomBytes(32).toString('hex')}`;
    planted.push(token, signature);
    expect(
      (
        await http(a.url, 'POST', `/v1/payment_sessions/${s2.session_id}/simulate`, {
          headers: { Authorization: `Bearer ${token}`, 'X-Service-Signature': signature },
        })
      ).status,
    ).toBe(404);
    const [nonDemo] = await alertsOf('simulation_abuse', `merchant:${m.id}`);
    expect(nonDemo.payload).toMatchObject({
      severity: 'P3',
      last_error_code: 'blocked_non_demo',
      session_id: s2.session_id,
      merchant_id: m.id,
    });

    const demo = (await http(a.url, 'POST', '/v1/payment_sessions/demo', { body: {} })).body;
    for (let i = 0; i < 10; i++) await http(pick(i).url, 'POST', `/v1/payment_sessions/${demo.session_id}/simulate`);
    expect(await alertsOf('simulation_abuse', `session:${demo.session_id}`)).toHaveLength(0);
    await http(b.url, 'POST', `/v1/payment_sessions/${demo.session_id}/simulate`);
    const [calls] = await alertsOf('simulation_abuse', `session:${demo.session_id}`);
    expect(calls.payload).toMatchObject({ count: 11, threshold: 10, session_id: demo.session_id });
  });

  async function failedAttempts(eventId: string) {
    const ev = await store.get<{ id: string; attempts: Array<{ status: number | null }> }>('webhook_events', eventId);
    return ev?.attempts ?? [];
  }

  async function sessionWithEvent(m: { apiKey: string }) {
    const s = (
      await http(a.url, 'POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 2, expires_in: '1h', paymentMethod: ETH } })
    ).body;
    expect((await http(b.url, 'POST', `/v1/payment_sessions/${s.session_id}/simulate`, { key: m.apiKey })).status).toBe(200);
    const ev = await eventually('the webhook event', async () => (await store.find('webhook_events', { session_id: s.session_id }))[0]);
    await eventually('the first automatic attempt', async () => (await failedAttempts(ev.id)).length === 1, 60_000);
    return { sessionId: s.session_id as string, eventId: ev.id };
  }

  it('failed_webhook_flood: the 21st failed delivery of a merchant in 10 minutes, not the 20th', async () => {
    const m = await register(40, { webhook_url: `http://127.0.0.1:${hooks.port}/fail` });
    const { sessionId, eventId } = await sessionWithEvent(m);
    for (let i = 1; i < 20; i++)
      await http(pick(i).url, 'POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, { key: m.apiKey, body: {} });
    expect(await failedAttempts(eventId)).toHaveLength(20);
    expect(await alertsOf('failed_webhook_flood', `merchant:${m.id}`)).toHaveLength(0);
    // the crossing request carries a bearer token and a signature value as well
    const token = `usr_${randomBytes(24).toString('base64url')}`;
    planted.push(token);
    await http(a.url, 'POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, {
      key: m.apiKey,
      body: {},
      headers: { Authorization: `Bearer ${token}` },
    });
    const [alert] = await alertsOf('failed_webhook_flood', `merchant:${m.id}`);
    expect(alert.rule).toBe('failures');
    expect(alert.payload).toMatchObject({
      severity: 'P2',
      count: 21,
      threshold: 20,
      delivery_id: eventId,
      last_error_code: 'http_500',
      merchant_id: m.id,
    });
  });

  it('failed_webhook_flood: a failure rate above 50% (with enough attempts), not at 50%', async () => {
    const m = await register(50, { webhook_url: `http://127.0.0.1:${hooks.port}/rate` });
    const { sessionId, eventId } = await sessionWithEvent(m);
    for (let i = 1; i < 30; i++)
      await http(pick(i).url, 'POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, { key: m.apiKey, body: {} });
    const attempts = await failedAttempts(eventId);
    expect(attempts).toHaveLength(30);
    expect(attempts.filter((x) => x.status === 503)).toHaveLength(15);
    expect(await alertsOf('failed_webhook_flood', `merchant:${m.id}`)).toHaveLength(0);
    await http(b.url, 'POST', `/v1/payment_sessions/${sessionId}/webhook/retry`, { key: m.apiKey, body: {} });
    const [alert] = await alertsOf('failed_webhook_flood', `merchant:${m.id}`);
    expect(alert.rule).toBe('failure_rate');
    expect(alert.payload).toMatchObject({ count: 51, threshold: 50, last_error_code: 'http_503' });
  });

  it('one alert per type and key per window: more crossings fold into the open alert', async () => {
    const m = await register(60);
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await http(pick(i).url, 'POST', '/v1/payment_sessions', {
            key: m.apiKey,
            body: { amount: 2000, expires_in: '1h', paymentMethod: ETH },
          })
        ).status,
      ).toBe(400);
    }
    const alerts = await alertsOf('limit_violation', `merchant:${m.id}`);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].notifications).toBe(1);
    expect(alerts[0].payload.count).toBe(3);
  });

  it('delivers every alert signed to ALERT_WEBHOOK_URL and to Alertmanager', async () => {
    const all = await store.find<AlertDoc>('alerts', {});
    const types = ['registration_spike', 'failed_webhook_flood', 'simulation_abuse', 'limit_violation'];
    expect(new Set(all.map((x) => x.alert_type))).toEqual(new Set(types));
    await eventually(
      'every alert at the webhook',
      () => all.every((x) => alertRx.received.some((r) => JSON.parse(r.raw).alert_id === x.id)),
      120_000,
      200,
    );
    for (const r of alertRx.received) {
      const sig = parseSignatureHeader(String(r.headers['x-service-signature']));
      expect(sig).not.toBeNull();
      expect(sig!.signatures).toContain(computeSignature(sig!.timestamp, r.raw, ALERT_SECRET));
      expect(String(r.headers['x-service-event'])).toMatch(/^alert\./);
    }
    const held = await eventually(
      'every alert in Alertmanager',
      async () => {
        const got = await am.alerts();
        return all.every((x) => got.some((g) => g.labels.alert_id === x.id)) && got;
      },
      120_000,
      500,
    );
    const one = held.find((g) => g.labels.alertname === 'failed_webhook_flood')!;
    expect(one.labels).toMatchObject({ severity: 'P2', alert_type: 'failed_webhook_flood' });
    expect(one.annotations.merchant_id).toMatch(/^mer_/);
  });

  it('no planted secret is in any alert, delivery, audit row, log line or /metrics output', async () => {
    // and every signature value the service really sent: merchant webhooks and alert webhooks
    const sent = [...hooks.received, ...alertRx.received].flatMap(
      (r) => parseSignatureHeader(String(r.headers['x-service-signature']))?.signatures ?? [],
    );
    expect(sent.length).toBeGreaterThan(50);
    const forbidden = [...planted, ...sent, ...registered.flatMap((m) => [m.apiKey, m.webhookSecret]), ALERT_SECRET];
    const metrics = await Promise.all(nodes().map(async (n) => (await fetch(`${n.url}/metrics`)).text()));
    expect(metrics[0]).toContain('alerts_raised_total');
    expect(metrics[0]).toMatch(/http_requests_total\{method="POST",route="\/v1\/payment_sessions\/:session_id\/simulate",status="\d+"\}/);
    const haystacks: Record<string, string> = {
      alerts: JSON.stringify(await store.find('alerts', {})),
      alert_deliveries: JSON.stringify(await store.find('alert_deliveries', {})),
      audit_events: JSON.stringify(await store.find('audit_events', {})),
      logs: a.output() + b.output(),
      metrics: metrics.join('\n'),
      alert_webhook: alertRx.received.map((r) => r.raw).join('\n'),
      alertmanager: JSON.stringify(await am.alerts()),
    };
    expect(haystacks.logs).toMatch(/alert alt_\w+ limit_violation P3 raised/);
    for (const [where, text] of Object.entries(haystacks)) {
      for (const secret of forbidden) {
        if (text.includes(secret)) throw new Error(`a planted secret (${secret.slice(0, 12)}…) is in ${where}`);
      }
    }
  });
});
