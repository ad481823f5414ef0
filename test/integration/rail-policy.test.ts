/**
 * The merchant rail policy through HTTP: PUT/GET /v1/me/rail-policy, and a rail outside it refused before
 * a payable session exists on session creation (amounts and fiat prices), checkout intents and x402
 * challenges, with a 400 on paymentMethod naming the rail; audited; no policy = every enabled rail.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { merchant } from './sessions-helpers.ts';
import { RAILS } from './chain-listener-helpers.ts';
import { CatalogClient } from './catalog-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { createPaymentsClient, BadRequestError } from '../../sdk/src/node.ts';

describe('merchant rail policy', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let other: RegisteredMerchant;

  beforeAll(async () => {
    t = await startTestNode({ RATE_SOURCES: '*=static', RATES_STATIC: 'ETH:USD=2500,USDC:USD=1' });
    m = await merchant(t);
    other = await merchant(t);
  });
  afterAll(() => t?.stop());

  const put = (body: unknown, key = m.apiKey) => t.request('PUT', '/v1/me/rail-policy', { key, body });
  const policy = async (key = m.apiKey) => (await t.request('GET', '/v1/me/rail-policy', { key })).body;
  const session = (paymentMethod: object, extra: Record<string, unknown> = { amount: 1 }, key = m.apiKey) =>
    t.request('POST', '/v1/payment_sessions', { key, body: { expires_in: '15m', paymentMethod, ...extra } });
  const sessionCount = async () => (await t.request('GET', '/v1/payment_sessions?limit=100', { key: m.apiKey })).body.data.length;
  // an x402 challenge names the rail without methodID
  const challenge = ({ chain, network, token }: { chain: string; network: string; token: string }) =>
    t.request('POST', '/v1/x402/challenges', {
      key: m.apiKey,
      body: { resource: '/report', amount_subunits: '1000000', paymentMethod: { chain, network, token } },
    });

  it('without a policy every enabled rail of the environment is effective', async () => {
    expect(await policy()).toEqual({
      allowed_rails: null,
      effective_rails: ['ethereum:testnet:USDC', 'ethereum:testnet:ETH', 'solana:testnet:USDC', 'solana:testnet:SOL'],
      updated_at: null,
    });
    expect((await session(RAILS.eth)).status).toBe(201);
    expect((await t.request('GET', '/v1/me/rail-policy')).status).toBe(401);
  });

  it('refuses an unknown rail, an empty list and unknown fields, changing nothing', async () => {
    const unknown = await put({ allowed_rails: ['ethereum:testnet:USDC', 'bitcoin:mainnet:BTC'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      code: 3,
      field: 'allowed_rails[1]',
      message: expect.stringMatching(/^allowed_rails\[1\] 'bitcoin:mainnet:BTC' is not a rail/),
      remediation: expect.stringMatching(/GET \/v1\/payment_methods/),
    });
    expect((await put({ allowed_rails: ['USDC'] })).status).toBe(400);
    expect((await put({ allowed_rails: [] })).status).toBe(400);
    expect((await put({ allowed_rails: ['ethereum:testnet:USDC', 'ethereum:testnet:USDC'] })).status).toBe(400);
    expect((await put({ allowed_rails: ['ethereum:testnet:USDC'], extra: 1 })).body.message).toMatch(/unknown field 'extra'/);
    expect((await put({})).status).toBe(400);
    expect((await policy()).allowed_rails).toBeNull();
  });

  it('a session on a rail outside the policy is a 400 on paymentMethod naming the rail; no session exists', async () => {
    const set = await put({ allowed_rails: ['solana:testnet:USDC', 'ethereum:testnet:USDC', 'ethereum:mainnet:USDC'] });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      // in the rail list's order; the mainnet rail is kept (named before it is configured) but not effective
      allowed_rails: ['ethereum:testnet:USDC', 'solana:testnet:USDC', 'ethereum:mainnet:USDC'],
      effective_rails: ['ethereum:testnet:USDC', 'solana:testnet:USDC'],
      updated_at: expect.any(String),
    });
    expect(await policy()).toEqual(set.body);

    const before = await sessionCount();
    for (const rail of [RAILS.eth, RAILS.sol]) {
      const r = await session(rail);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 3, field: 'paymentMethod', remediation: expect.stringMatching(/PUT \/v1\/me\/rail-policy/) });
      expect(r.body.message).toBe(
        `${rail.chain}:${rail.network}:${rail.token} is not allowed by the merchant's rail policy (allowed_rails: ethereum:testnet:USDC, solana:testnet:USDC, ethereum:mainnet:USDC)`,
      );
    }
    // a price in fiat is refused the same way, before any rate is read
    const priced = await session(RAILS.eth, { price: { amount: '25.00', currency: 'USD' } });
    expect(priced.status).toBe(400);
    expect(priced.body).toMatchObject({ field: 'paymentMethod', message: expect.stringMatching(/^ethereum:testnet:ETH is not allowed/) });
    expect(await sessionCount()).toBe(before);

    expect((await session(RAILS.ethUsdc)).status).toBe(201);
    expect((await session(RAILS.solUsdc, { price: { amount: '2.50', currency: 'USD' } })).body).toMatchObject({
      expected_amount_subunits: '2500000',
    });
    // another merchant's policy is its own
    expect((await session(RAILS.eth, { amount: 1 }, other.apiKey)).status).toBe(201);
  });

  it('checkout intents offer only the rails the policy allows, and are refused when it allows none', async () => {
    const catalog = new CatalogClient(t, { key: m.apiKey });
    const usdc = await catalog.published();
    const intent = await t.request('POST', `/v1/catalog/prices/${usdc.price.id}/checkout-intent`);
    expect(intent.status).toBe(200);
    expect(intent.body.allowed_payment_methods).toEqual(['ethereum:testnet:USDC', 'solana:testnet:USDC']);

    const eth = await catalog.published({
      storeId: usdc.store.id,
      product: { slug: 'eth-only' },
      price: { amount_subunits: '1000000000000000', currency_or_token: 'ETH' },
    });
    const refused = await t.request('POST', `/v1/catalog/prices/${eth.price.id}/checkout-intent`);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      field: 'paymentMethod',
      message: expect.stringMatching(/^ethereum:testnet:ETH is not allowed by the merchant's rail policy/),
    });
  });

  it('x402 challenges on a rail outside the policy are refused, and none is stored', async () => {
    const refused = await challenge(RAILS.eth);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      field: 'paymentMethod',
      message: expect.stringMatching(/^ethereum:testnet:ETH is not allowed by the merchant's rail policy/),
    });
    expect(await t.node.rt.store.count('x402_challenges', { merchant_id: m.id })).toBe(0);
    expect((await challenge(RAILS.ethUsdc)).status).toBe(201);
  });

  it('through the SDK: set the policy, price a session in fiat on an allowed rail, a typed 400 on another', async () => {
    const client = createPaymentsClient({ baseUrl: t.url, apiKey: other.apiKey });
    expect(await client.railPolicy.set(['solana:testnet:USDC'])).toMatchObject({ allowed_rails: ['solana:testnet:USDC'] });
    expect((await client.railPolicy.get()).effective_rails).toEqual(['solana:testnet:USDC']);
    const s = await client.sessions.create({
      price: { amount: '12.34', currency: 'USD' },
      expires_in: '15m',
      paymentMethod: RAILS.solUsdc,
    });
    expect(s).toMatchObject({ expected_amount_subunits: '12340000', quote: { currency: 'USD', amount: '12.34', rate: '1' } });
    await expect(client.sessions.create({ amount: 1, expires_in: '15m', paymentMethod: RAILS.ethUsdc })).rejects.toMatchObject({
      constructor: BadRequestError,
      code: 3,
      field: 'paymentMethod',
    });
    expect(await client.railPolicy.set(null)).toMatchObject({ allowed_rails: null });
  });

  it('every change is audited with the list it replaced; null removes the policy', async () => {
    const cleared = await put({ allowed_rails: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ allowed_rails: null, updated_at: null });
    expect((await session(RAILS.eth)).status).toBe(201);
    const events = (await t.request('GET', '/v1/audit-events?type=merchant.rail_policy.set', { key: m.apiKey })).body.data;
    expect(events.map((e: { details: unknown }) => e.details)).toEqual([
      { allowed_rails: null, previous_allowed_rails: ['ethereum:testnet:USDC', 'solana:testnet:USDC', 'ethereum:mainnet:USDC'] },
      { allowed_rails: ['ethereum:testnet:USDC', 'solana:testnet:USDC', 'ethereum:mainnet:USDC'], previous_allowed_rails: null },
    ]);
  });
});
