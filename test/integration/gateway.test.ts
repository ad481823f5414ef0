/** The gateway's contract: error envelope, JSON only, body limit, unknown routes, rate limit, rails, metrics. */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { freePort } from '../helpers/ports.ts';

describe('gateway', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ RATE_LIMIT_PER_MINUTE: '5', BODY_LIMIT: '2kb' });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('answers unknown routes and methods with 404 code 2', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['GET', '/'],
      ['DELETE', '/v1/me'],
      ['GET', '/v2/me'],
    ]) {
      const res = await t.request(method, path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 2, message: expect.any(String) });
    }
  });

  it('accepts JSON bodies only, refuses malformed and oversized ones, with code 3', async () => {
    const path = '/v1/merchants/email-verification';
    const notJson = await t.request('POST', path, { raw: 'email=a@b.c', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(notJson.status).toBe(415);
    expect(notJson.body).toMatchObject({ code: 3, message: 'Content-Type must be application/json' });
    const malformed = await t.request('POST', path, { raw: '{"email":', headers: { 'Content-Type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 3, message: 'request body is not valid JSON' });
    const big = await t.request('POST', path, { body: { email: `${'a'.repeat(4000)}@b.example` } });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 3, message: 'request body is too large' });
    const array = await t.request('POST', path, { body: ['a@b.example'] });
    expect(array.status).toBe(400);
    expect(array.body.code).toBe(3);
    const missing = await t.request('POST', path, { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/email is required/);
  });

  it('serves the public rail list with every Rail field, testnet only by default', async () => {
    const res = await t.request('GET', '/v1/payment_methods');
    expect(res.status).toBe(200);
    const triples = res.body.map((r: any) => `${r.chain}:${r.network}:${r.token}`).sort();
    expect(triples).toEqual(['ethereum:testnet:ETH', 'ethereum:testnet:USDC', 'solana:testnet:SOL', 'solana:testnet:USDC']);
    for (const rail of res.body) {
      expect(Object.keys(rail).sort()).toEqual(['chain', 'decimals', 'display_name', 'kind', 'min_amount', 'network', 'token']);
      expect(typeof rail.min_amount).toBe('number');
      expect(Number.isInteger(rail.decimals)).toBe(true);
    }
    expect(res.body.find((r: any) => r.chain === 'solana' && r.token === 'USDC')).toMatchObject({ decimals: 6, kind: 'spl' });
  });

  it('lists mainnet rails only when their chain is configured', async () => {
    const m = await startTestNode({ ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:1' });
    try {
      const res = await m.request('GET', '/v1/payment_methods');
      const triples = res.body.map((r: any) => `${r.chain}:${r.network}:${r.token}`);
      expect(triples).toEqual(expect.arrayContaining(['ethereum:mainnet:USDC', 'ethereum:mainnet:ETH']));
      expect(triples.some((x: string) => x.startsWith('solana:mainnet'))).toBe(false);
    } finally {
      await m.stop();
    }
  });

  it('limits each merchant to rate_limit_per_minute with 429 code 4 and no X-RateLimit headers', async () => {
    const a = await registerMerchant(t);
    const b = await registerMerchant(t);
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 7; i++) {
      last = await t.request('GET', '/v1/me', { key: a.apiKey });
      statuses.push(last.status);
      for (const name of last.headers.keys()) expect(name.toLowerCase()).not.toMatch(/ratelimit|rate-limit/);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(last!.body).toMatchObject({ code: 4, message: expect.stringMatching(/rate limit/) });
    // another merchant has its own count
    expect((await t.request('GET', '/v1/me', { key: b.apiKey })).status).toBe(200);
    // an operator raises the limit live
    await t.call('operators.setRateLimit', { merchant_id: a.id, rate_limit_per_minute: 100 });
    const me = await t.request('GET', '/v1/me', { key: a.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.rate_limit_per_minute).toBe(100);

    const metrics = await t.request('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain(
      'abuse_signal_total{signal="limit_violation",outcome="rate_limited",environment="sandbox",chain="",network="",token=""} 2',
    );
    expect(metrics.text).toContain('outcome="registered"');
    // no merchant ids, keys or addresses in metrics
    for (const secret of [a.id, a.apiKey, b.id, '127.0.0.1']) expect(metrics.text).not.toContain(secret);
    const labels = new Set(
      [...metrics.text.matchAll(/^abuse_signal_total\{([^}]*)\}/gm)].flatMap((m) => m[1].split(',').map((kv) => kv.split('=')[0])),
    );
    expect([...labels].sort()).toEqual(['chain', 'environment', 'network', 'outcome', 'signal', 'token']);
  });
});

describe('bearer rate limit', () => {
  it('limits a bearer user to the default per-minute limit', async () => {
    const t = await startTestNode({ RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const { bearer_token } = await t.call('operators.createUser', { email: 'ops@bearer.example' });
      const reg = await t.request('POST', '/v1/merchants', { bearer: bearer_token, body: { name: 'B', sandbox: true } });
      expect(reg.status).toBe(201);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', '/v1/stores', { bearer: bearer_token })).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await t.stop();
    }
  });
});

describe('metrics on their own port', () => {
  it('serves /metrics on METRICS_PORT and not on the API port', async () => {
    const port = await freePort();
    const t = await startTestNode({ METRICS_PORT: String(port) });
    try {
      expect((await t.request('GET', '/metrics')).status).toBe(404);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('abuse_signal_total');
    } finally {
      await t.stop();
    }
  });
});
