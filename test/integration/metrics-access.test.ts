/** /metrics on the API port is not public: a bearer METRICS_TOKEN, or a direct local caller when none is set. */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { mayReadMetrics } from '../../lib/ops/metrics-access.ts';

describe('/metrics access', () => {
  let withToken: TestNode;
  let local: TestNode;
  beforeAll(async () => {
    withToken = await startTestNode({ METRICS_TOKEN: 'metrics-token-for-tests' });
    local = await startTestNode();
  });
  afterAll(async () => {
    await withToken.stop();
    await local.stop();
  });

  it('with METRICS_TOKEN, answers only the bearer of the token', async () => {
    const anon = await withToken.request('GET', '/metrics');
    expect(anon.status).toBe(401);
    expect(anon.body).toMatchObject({ code: 7, message: expect.any(String) });
    expect((await withToken.request('GET', '/metrics', { bearer: 'wrong-token-wrong-token' })).status).toBe(401);
    const ok = await withToken.request('GET', '/metrics', { bearer: 'metrics-token-for-tests' });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('# HELP');
  });

  it('without a token, answers a direct local caller but not one forwarded by a proxy', async () => {
    expect((await local.request('GET', '/metrics')).status).toBe(200);
    expect((await local.request('GET', '/metrics', { headers: { 'X-Forwarded-For': '203.0.113.7' } })).status).toBe(401);
  });

  it('refuses remote peers when no token is set', () => {
    const req = (remoteAddress: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress }, headers }) as never;
    expect(mayReadMetrics(req('203.0.113.7'), '', true)).toBe(false);
    expect(mayReadMetrics(req('::ffff:127.0.0.1'), '', true)).toBe(true);
    expect(mayReadMetrics(req('203.0.113.7'), '', false)).toBe(true); // a separate METRICS_PORT is the operators' network
  });
});
