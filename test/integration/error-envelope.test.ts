/**
 * The enriched error envelope over HTTP, on a representative set of endpoints: the exact shapes of a
 * validation failure with several bad fields, a 401 without a key, a 404, a 409, a 429 and a refused
 * webhook_url; the X-Request-Id on every answer (kept when sane, replaced otherwise), equal to the
 * error's request_id and found in the server's log line for that request.
 */
import { startTestNode, type HttpResult, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { envelopeProblem } from '../helpers/schema-fuzz.ts';
import { solvePow } from '../../lib/onboarding/pow.ts';
import { REMEDIATION } from '../../lib/core/errors.ts';
import { WEBHOOK_URL_REMEDIATION } from '../../lib/webhooks/net-guard.ts';

const REQUEST_ID = /^req_[0-9a-z]{26}$/;
const RAIL = { methodID: 0, chain: 'ethereum', token: 'USDC', network: 'testnet' };

describe('error envelope over HTTP', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  const logged: string[] = [];
  let spies: jest.SpyInstance[] = [];

  beforeAll(async () => {
    // the access log is at info; keep what the node logs instead of printing it
    spies = (['log', 'info', 'warn', 'error'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(' '));
      }),
    );
    t = await startTestNode({ LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE: 'false' });
    m = await registerMerchant(t, { name: 'Envelope shop' });
  });
  afterAll(async () => {
    await t?.stop();
    for (const s of spies) s.mockRestore();
  });

  /** The answer's body after checking it is a well-formed envelope whose request_id is the header. */
  function envelope(res: HttpResult) {
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(envelopeProblem(res.status, res.headers.get('x-request-id'), res.body)).toBeNull();
    expect(res.body.request_id).toMatch(REQUEST_ID);
    return res.body;
  }

  it('lists every invalid field of a payment session at once, schema and creation rules together', async () => {
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: -1, expires_in: 'forever', paymentMethod: { ...RAIL, network: 'moon' }, colour: 'red' },
    });
    expect(res.status).toBe(400);
    expect(envelope(res)).toEqual({
      code: 3,
      message: "unknown field 'colour' in body: no other properties are allowed",
      field: 'colour',
      remediation: 'Remove colour: this operation accepts only the fields its schema in openapi.json lists.',
      request_id: res.headers.get('x-request-id'),
      retryable: false,
      errors: [
        { field: 'colour', message: "unknown field 'colour' in body: no other properties are allowed" },
        { field: 'amount', message: 'body.amount must be > 0' },
        { field: 'paymentMethod.network', message: 'body.paymentMethod.network must be one of "testnet", "mainnet"' },
        // not a schema error: the creation rules checked the field the schema let through
        {
          field: 'expires_in',
          message: 'expires_in must be a duration such as 15m, 45m or 1h (a whole number followed by s, m, h or d), between 10s and 7d',
        },
      ],
    });
    // the rules alone, in their documented order: rail, then expires_in, then amount
    const rules = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { amount: 0.0000001, expires_in: '30d', paymentMethod: { ...RAIL, token: 'DOGE' } },
    });
    expect(rules.status).toBe(400);
    expect(envelope(rules)).toEqual({
      code: 3,
      message: 'no enabled rail is ethereum:testnet:DOGE; choose a (chain, network, token) triple from GET /v1/payment_methods',
      field: 'paymentMethod',
      remediation: REMEDIATION.rails,
      request_id: rules.headers.get('x-request-id'),
      retryable: false,
      errors: [
        {
          field: 'paymentMethod',
          message: 'no enabled rail is ethereum:testnet:DOGE; choose a (chain, network, token) triple from GET /v1/payment_methods',
        },
        { field: 'expires_in', message: 'expires_in must be between 10s and 7d; got 30d' },
      ],
    });
    // a single bad field names itself too, and nothing was created
    const one = await t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { amount: 5, expires_in: '15m' } });
    expect(envelope(one)).toMatchObject({ code: 3, field: 'paymentMethod', errors: [{ field: 'paymentMethod' }] });
    expect((await t.request('GET', '/v1/payment_sessions', { key: m.apiKey })).body.data).toEqual([]);
  });

  it('answers 401 naming X-API-Key, without a field, and not retryable', async () => {
    for (const key of [undefined, 'service_sk_test_not_a_key_of_anyone_000000']) {
      const res = await t.request('GET', '/v1/me', { key });
      expect(res.status).toBe(401);
      expect(envelope(res)).toEqual({
        code: 7,
        message: 'missing or invalid authorization header',
        remediation: REMEDIATION.apiKey,
        request_id: res.headers.get('x-request-id'),
        retryable: false,
      });
      expect(res.body.remediation).toContain('X-API-Key');
      // sent with its length in one write, not in chunked framing
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
      expect(res.headers.get('transfer-encoding')).toBeNull();
    }
    // a route that also takes a bearer token says so
    const catalog = await t.request('GET', '/v1/stores');
    expect(envelope(catalog)).toMatchObject({ code: 7, remediation: REMEDIATION.apiKeyOrBearer });
  });

  it('answers 404 for an unknown resource and for an unknown path', async () => {
    const res = await t.request('GET', '/v1/payment_sessions/ps_00000000000000000000000000', { key: m.apiKey });
    expect(res.status).toBe(404);
    expect(envelope(res)).toEqual({
      code: 2,
      message: 'payment session not found',
      remediation: REMEDIATION.notFound,
      request_id: res.headers.get('x-request-id'),
      retryable: false,
    });
    const path = await t.request('GET', '/v1/nothing-here', { key: m.apiKey });
    expect(path.status).toBe(404);
    expect(envelope(path)).toMatchObject({ code: 2, retryable: false });
  });

  it('answers 409 for an Idempotency-Key reused with another payload, saying what to send', async () => {
    const headers = { 'Idempotency-Key': `order-${Date.now()}` };
    const first = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      headers,
      body: { amount: 5, expires_in: '15m', paymentMethod: RAIL },
    });
    expect(first.status).toBe(201);
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      headers,
      body: { amount: 6, expires_in: '15m', paymentMethod: RAIL },
    });
    expect(res.status).toBe(409);
    expect(envelope(res)).toEqual({
      code: 5,
      message: 'idempotency key was already used with a different payload',
      remediation: REMEDIATION.idempotency,
      request_id: res.headers.get('x-request-id'),
      retryable: false,
    });
    // a bad key is the header's fault
    const bad = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      headers: { 'Idempotency-Key': 'with space' },
      body: { amount: 5, expires_in: '15m', paymentMethod: RAIL },
    });
    expect(envelope(bad)).toMatchObject({
      code: 3,
      field: 'Idempotency-Key',
      message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
    });
  });

  it('answers 429 retryable, naming where the limit is read', async () => {
    const shop = await registerMerchant(t, { name: 'Busy shop' });
    await t.call('operators.setRateLimit', { merchant_id: shop.id, rate_limit_per_minute: 2 });
    let res: HttpResult | undefined;
    for (let i = 0; i < 4; i++) {
      res = await t.request('GET', '/v1/me', { key: shop.apiKey });
      if (res.status === 429) break;
    }
    expect(res!.status).toBe(429);
    expect(envelope(res!)).toEqual({
      code: 4,
      message: 'rate limit of 2 requests per minute exceeded, retry later',
      remediation: 'Retry after the current minute; your limit is rate_limit_per_minute in GET /v1/me (the operator can raise it).',
      request_id: res!.headers.get('x-request-id'),
      retryable: true,
    });
  });

  it('refuses a private or http webhook_url naming https, WEBHOOK_ALLOW_PRIVATE=1 and payments listen', async () => {
    const email = `hooks${Date.now()}@trusted.test`;
    await t.call('operators.trustDomain', { value: 'trusted.test' });
    const start = await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
    const intent = start.body.registration_intent_id;
    const code = await t.mailer.waitForCode(email);
    expect(
      (await t.request('POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code } })).status,
    ).toBe(200);
    const pow = await t.request('POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } });
    const body = {
      name: 'Local shop',
      sandbox: true,
      registration_intent_id: intent,
      proof_of_work_challenge_id: pow.body.challenge_id,
      proof_of_work_nonce: solvePow(pow.body.challenge, pow.body.difficulty),
    };
    for (const [url, message] of [
      ['http://localhost:4242/webhooks', 'webhook_url must use https'],
      ['https://127.0.0.1/webhooks', 'webhook_url must point to a public address'],
    ]) {
      const res = await t.request('POST', '/v1/merchants', { body: { ...body, webhook_url: url } });
      expect(res.status).toBe(400);
      expect(envelope(res)).toEqual({
        code: 3,
        message,
        field: 'webhook_url',
        remediation: WEBHOOK_URL_REMEDIATION,
        request_id: res.headers.get('x-request-id'),
        retryable: false,
        errors: [{ field: 'webhook_url', message }],
      });
      expect(res.body.remediation).toMatch(/https/);
      expect(res.body.remediation).toContain('WEBHOOK_ALLOW_PRIVATE=1');
      expect(res.body.remediation).toContain('payments listen');
    }
    // the refusal changed nothing: the same intent still registers without the webhook
    expect((await t.request('POST', '/v1/merchants', { body })).status).toBe(201);
  });

  it('refuses a return_url that is not https, naming the field and WEBHOOK_ALLOW_PRIVATE; keeps an https one', async () => {
    const body = { amount: 5, expires_in: '15m', paymentMethod: RAIL };
    const res = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { ...body, return_url: 'http://localhost:4242/done' },
    });
    expect(res.status).toBe(400);
    expect(envelope(res)).toMatchObject({
      code: 3,
      message: 'return_url must use https',
      field: 'return_url',
      errors: [{ field: 'return_url', message: 'return_url must use https' }],
    });
    expect(res.body.remediation).toContain('WEBHOOK_ALLOW_PRIVATE=1');
    const ok = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { ...body, return_url: 'https://shop.example/orders/7' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.return_url).toBe('https://shop.example/orders/7');
    expect((await t.request('GET', `/v1/payment_sessions/${ok.body.session_id}`, { key: m.apiKey })).body.return_url).toBe(
      'https://shop.example/orders/7',
    );
  });

  it('puts an X-Request-Id on every answer, keeps a sane one, replaces any other, and logs the request under it', async () => {
    const ok = await t.request('GET', '/v1/payment_methods');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toMatch(REQUEST_ID);
    const page = await t.request('GET', '/openapi.json', { key: m.apiKey });
    expect(page.headers.get('x-request-id')).toMatch(REQUEST_ID);

    const mine = 'trace-7f3c2a1e-0b9d-4c55-8e21-3a6f0d9b1c44';
    const echoed = await t.request('GET', '/v1/me', { key: m.apiKey, headers: { 'X-Request-Id': mine } });
    expect(echoed.status).toBe(200);
    expect(echoed.headers.get('x-request-id')).toBe(mine);
    const refused = await t.request('GET', '/v1/me', { headers: { 'X-Request-Id': mine } });
    expect(refused.body.request_id).toBe(mine);

    for (const insane of ['has spaces in it', 'x'.repeat(200), '<script>', '-starts-with-dash']) {
      const res = await t.request('GET', '/v1/payment_methods', { headers: { 'X-Request-Id': insane } });
      expect(res.headers.get('x-request-id')).toMatch(REQUEST_ID);
    }

    // one log line per request, with its route template (never the raw path) and its id
    const waitForLine = async (id: string) => {
      for (let i = 0; i < 100 && !logged.some((l) => l.includes(`request_id=${id}`)); i++) await new Promise((r) => setTimeout(r, 20));
      return logged.filter((l) => l.includes(`request_id=${id}`));
    };
    for (let i = 0; i < 100 && logged.filter((l) => l.includes(`request_id=${mine}`)).length < 2; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await waitForLine(mine)).toEqual([
      expect.stringMatching(/GET \/v1\/me 200 [\d.]+ms request_id=/),
      expect.stringMatching(/GET \/v1\/me 401 [\d.]+ms request_id=/),
    ]);
    const missing = await t.request('GET', '/v1/payment_sessions/ps_00000000000000000000000000', { key: m.apiKey });
    const lines = await waitForLine(missing.body.request_id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('GET /v1/payment_sessions/:session_id 404');
    expect(lines[0]).not.toContain('ps_00000000000000000000000000');
  });
});
