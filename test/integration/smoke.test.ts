import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant } from '../helpers/merchant.ts';

describe('node smoke', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('registers a merchant and reads /v1/me', async () => {
    const m = await registerMerchant(t);
    expect(m.apiKey).toMatch(/^service_sk_test_/);
    const me = await t.request('GET', '/v1/me', { key: m.apiKey });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: m.id, rate_limit_per_minute: 60, sandbox: true });
  });
});
