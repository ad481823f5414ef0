/**
 * The alert subjects the two-node e2e test does not reach, through HTTP on one node:
 * - registration_spike per agent: an operator-issued bearer user registering merchants from many sources
 *   is one agent. Its 11th successful registration in 10 minutes raises the alert (keyed by the agent, not
 *   the source), the 10th does not; the payload names the agent and never the bearer token.
 * - simulation_abuse per merchant: more than 10 simulate calls in 10 minutes over a merchant's sessions,
 *   none of which reaches 10 on its own.
 * - limit_violation from the per-minute rate limit: the first request refused with 429 alerts, none before.
 */
import { postFrom } from '../helpers/post-from.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import type { AlertDoc } from '../../lib/ops/alerts/engine.ts';
import { merchant } from './sessions-helpers.ts';

jest.setTimeout(300_000);

describe('alert subjects: agents and merchants', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ SERVICES: 'api,discovery,merchants,merchant-actors,operators,sessions,session-actors,ops' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  const spikes = () => t.node.rt.store.find<AlertDoc>('alerts', { alert_type: 'registration_spike' });

  it('the 11th registration of one bearer agent from different sources alerts, the 10th does not', async () => {
    const { bearer_token: token } = await t.call<{ bearer_token: string }>('operators.createUser', {
      email: `agent${Date.now()}@trusted.test`,
    });
    const register = async (i: number) => {
      const res = await postFrom(t.url, '/v1/merchants', { name: `Agent Shop ${i}`, sandbox: false }, `127.0.0.${10 + i}`, {
        Authorization: `Bearer ${token}`,
      });
      expect(res.status).toBe(201);
    };
    for (let i = 0; i < 10; i++) await register(i);
    expect(await spikes()).toHaveLength(0);
    await register(10);
    const alerts = await spikes();
    expect(alerts).toHaveLength(1);
    const [alert] = alerts;
    expect(alert.key).toMatch(/^agent:/);
    expect(alert.payload).toMatchObject({
      alert_type: 'registration_spike',
      severity: 'P1',
      count: 11,
      threshold: 10,
      route: 'POST /v1/merchants',
      environment: 'live',
    });
    expect(alert.payload.agent_id).toMatch(/^[0-9a-z_]{6,64}$/);
    expect(alert.key).toBe(`agent:${alert.payload.agent_id}`);
    expect(JSON.stringify(alert)).not.toContain(token);
    expect(alert.payload.redacted_fields).toContain('headers.authorization');
  });

  it("the 11th simulate call over one merchant's sessions alerts for the merchant, the 10th does not", async () => {
    const m = await merchant(t);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const s = await t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { amount: 1, expires_in: '1h', paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } },
      });
      expect(s.status).toBe(201);
      ids.push(s.body.session_id);
    }
    const abuse = () => t.node.rt.store.find<AlertDoc>('alerts', { alert_type: 'simulation_abuse', merchant_id: m.id });
    // two calls per session (the second is refused: already completed): five sessions, ten calls
    for (let i = 0; i < 10; i++) await t.request('POST', `/v1/payment_sessions/${ids[Math.floor(i / 2)]}/simulate`, { key: m.apiKey });
    expect(await abuse()).toHaveLength(0);
    await t.request('POST', `/v1/payment_sessions/${ids[5]}/simulate`, { key: m.apiKey });
    const [alert] = await abuse();
    expect(alert).toMatchObject({ key: `merchant:${m.id}`, rule: 'simulate_calls' });
    expect(alert.payload).toMatchObject({ severity: 'P3', count: 11, threshold: 10, merchant_id: m.id, session_id: ids[5] });
  });

  it("a request refused by the merchant's rate limit raises limit_violation, the requests within it do not", async () => {
    const m = await merchant(t);
    await t.call('operators.setRateLimit', { merchant_id: m.id, rate_limit_per_minute: 3 });
    const limits = () => t.node.rt.store.find<AlertDoc>('alerts', { alert_type: 'limit_violation', merchant_id: m.id });
    let status = 200;
    for (let i = 0; i < 10 && status !== 429; i++) {
      expect(await limits()).toHaveLength(0);
      status = (await t.request('GET', '/v1/me', { key: m.apiKey })).status;
    }
    expect(status).toBe(429);
    const [alert] = await limits();
    expect(alert.payload).toMatchObject({
      alert_type: 'limit_violation',
      severity: 'P3',
      merchant_id: m.id,
      last_error_code: 'rate_limited',
      environment: 'sandbox',
    });
    expect(JSON.stringify(alert)).not.toContain(m.apiKey);
  });
});
