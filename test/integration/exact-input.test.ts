/**
 * The gateway never changes what a client sent, and malformed input is a 4xx in the envelope: numbers a
 * double cannot carry are refused (exact amounts go as digit strings), amounts are bounded, bodies that do
 * not decode or nest too deep and oversized headers get a clear 400/431, and nothing is written.
 */
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { request as rawRequest } from 'node:http';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant, postRawSession } from './sessions-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { CatalogClient } from './catalog-helpers.ts';

const ETH = { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'ETH' };
const USDC = { ...ETH, token: 'USDC' };

describe('exact and well-formed input', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  beforeAll(async () => {
    t = await startTestNode();
    m = await merchant(t);
  });
  afterAll(async () => {
    await t.stop();
  });

  const raw = (body: string | Buffer, headers: Record<string, string> = {}) => postRawSession(t, m.apiKey, body, headers);
  const sessions = () => t.node.rt.store.count('payment_sessions', {});

  it('refuses numbers that lost digits on the way to a double, and creates nothing', async () => {
    const before = await sessions();
    for (const amount of ['0.123456789012345678', '9007199254740993', '1e999', '1.00000000000000001']) {
      const res = await raw(`{"amount":${amount},"expires_in":"1h","paymentMethod":${JSON.stringify(amount.includes('.') ? ETH : USDC)}}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 3, message: expect.stringMatching(/cannot be carried exactly by a JSON number/) });
    }
    expect(await sessions()).toBe(before);
  });

  it('takes the exact amount as amount_subunits, bounds amounts, and refuses a disagreeing pair', async () => {
    const exact = await raw(JSON.stringify({ amount_subunits: '123456789012345678', expires_in: '1h', paymentMethod: ETH }));
    expect(exact.status).toBe(201);
    expect(exact.body.expected_amount_subunits).toBe('123456789012345678');
    const huge = await raw(`{"amount":1e308,"expires_in":"1h","paymentMethod":${JSON.stringify(USDC)}}`);
    expect(huge.status).toBe(400);
    expect(huge.body.message).toMatch(/larger than the maximum of 1000000000000000 token units/);
    const hugeExact = await raw(JSON.stringify({ amount_subunits: `1${'0'.repeat(40)}`, expires_in: '1h', paymentMethod: USDC }));
    expect(hugeExact.status).toBe(400);
    const both = await raw(JSON.stringify({ amount: 2, amount_subunits: '1000000', expires_in: '1h', paymentMethod: USDC }));
    expect(both.status).toBe(400);
    expect(both.body.message).toMatch(/amount and amount_subunits differ/);
    expect((await raw(JSON.stringify({ expires_in: '1h', paymentMethod: USDC }))).body.message).toMatch(
      /amount is required .* or amount_subunits/,
    );
    expect((await raw(JSON.stringify({ amount: 1.5, amount_subunits: '1500000', expires_in: '1h', paymentMethod: USDC }))).status).toBe(
      201,
    );
  });

  it('checks out a catalog price that needs more digits than a double carries', async () => {
    const c = new CatalogClient(t, { key: m.apiKey });
    const { price } = await c.published({ price: { amount_subunits: '123456789012345678', currency_or_token: 'ETH' } });
    const intent = (await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`)).body;
    const s = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: {
        amount_subunits: '123456789012345678',
        expires_in: '15m',
        paymentMethod: ETH,
        metadata: { checkout_reference_id: intent.checkout_reference_id },
      },
    });
    expect(s.status).toBe(201);
    expect(s.body.expected_amount_subunits).toBe('123456789012345678');
  });

  it('answers corrupt gzip, deflate and br bodies with 400, an unknown encoding with 415', async () => {
    const body = JSON.stringify({ amount: 1, expires_in: '1h', paymentMethod: USDC });
    expect((await raw(gzipSync(body), { 'Content-Encoding': 'gzip' })).status).toBe(201);
    expect((await raw(brotliCompressSync(body), { 'Content-Encoding': 'br' })).status).toBe(201);
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await raw(Buffer.from('definitely not compressed'), { 'Content-Encoding': encoding });
      expect(res).toMatchObject({
        status: 400,
        body: { code: 3, message: expect.stringMatching(/does not decode with its Content-Encoding/) },
      });
    }
    const unknown = await raw(Buffer.from(body), { 'Content-Encoding': 'snappy' });
    expect(unknown.status).toBe(415);
    expect(unknown.body.code).toEqual(expect.any(Number));
  });

  it('refuses nesting beyond 32 levels before anything recursive sees it', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const meta = await raw(`{"amount":1,"expires_in":"1h","paymentMethod":${JSON.stringify(USDC)},"metadata":${deep(999)}}`);
    expect(meta).toMatchObject({ status: 400, body: { code: 3, message: expect.stringMatching(/nest deeper than 32 levels/) } });
    expect((await raw(`${'['.repeat(5000)}${']'.repeat(5000)}`)).status).toBe(400);
    // brackets inside strings do not count
    expect(
      (await raw(JSON.stringify({ amount: 1, expires_in: '1h', paymentMethod: USDC, metadata: { note: '[[[[{{{{'.repeat(20) } }))).status,
    ).toBe(201);
  });

  it('answers headers over the limit with 431 in the envelope', async () => {
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(`${t.url}/v1/me`);
      const req = rawRequest(
        { host: u.hostname, port: u.port, path: u.pathname, headers: { 'X-API-Key': m.apiKey, 'X-Big': 'a'.repeat(40_000) } },
        (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(431);
    expect(JSON.parse(text)).toMatchObject({ code: 3, message: 'request headers are too large' });
  });
});
