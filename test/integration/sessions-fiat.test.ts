/**
 * Prices in fiat through HTTP: `price: {amount, currency}` instead of `amount`, quoted at a fresh rate of the
 * rail's token (a local CoinGecko-shaped source, and the static table), rounded up, locked with its quote for
 * the session's life; payments on a real Hardhat node judged in tokens against the locked amount while the
 * rate moves; no fresh rate is a 503; bad prices are 400s that change nothing.
 */
import { startHardhatNode, type HardhatNode } from '../harness/hardhat-node.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { FakeCoinGecko } from '../helpers/fake-coingecko.ts';
import { eventually } from '../helpers/wait.ts';
import { merchant } from './sessions-helpers.ts';
import { RAILS, sessionWhen } from './chain-listener-helpers.ts';
import type { RegisteredMerchant } from '../helpers/merchant.ts';
import { CatalogClient } from './catalog-helpers.ts';

jest.setTimeout(180_000);

const nowS = () => Math.floor(Date.now() / 1000);

describe('payment sessions priced in fiat', () => {
  let chain: HardhatNode;
  let gecko: FakeCoinGecko;
  let t: TestNode;
  let m: RegisteredMerchant;

  beforeAll(async () => {
    chain = await startHardhatNode();
    gecko = new FakeCoinGecko();
    await gecko.start();
    gecko.prices = {
      ethereum: { usd: '2500', eur: '2300', last_updated_at: nowS() },
      'usd-coin': { usd: '0.99991', last_updated_at: nowS() },
      // two hours old: older than RATES_MAX_AGE (1 h by default)
      solana: { usd: '150.25', last_updated_at: nowS() - 7200 },
    };
    t = await startTestNode({
      ETHEREUM_TESTNET_RPC_URL: chain.url,
      ETHEREUM_TESTNET_CONFIRMATIONS: '1',
      CHAIN_POLL_INTERVAL_MS: '100',
      SESSION_SCAN_INTERVAL_MS: '100',
      RATES_HTTP_URL: gecko.url,
      // no source at all for ETH in GBP (the static table has no entry for it)
      RATE_SOURCES: '*=http;ETH:GBP=static',
      RATES_CACHE_TTL: '1',
    });
    m = await merchant(t);
  });

  afterAll(async () => {
    await t?.stop();
    await gecko?.stop();
    await chain?.stop();
  });

  const create = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    t.request('POST', '/v1/payment_sessions', { key: m.apiKey, body: { expires_in: '1h', ...body }, headers });
  const get = async (id: string) => (await t.request('GET', `/v1/payment_sessions/${id}`, { key: m.apiKey })).body;

  it('25.00 USD at 2,500 USD/ETH asks for exactly 0.01 ETH, with its quote; the amount is locked while the rate moves, and payments are judged in ETH', async () => {
    const res = await create({ price: { amount: '25.00', currency: 'USD' }, paymentMethod: RAILS.eth });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(s).toMatchObject({
      expected_amount: 0.01,
      expected_amount_subunits: '10000000000000000',
      currency: 'ETH',
      quote: {
        currency: 'USD',
        amount: '25.00',
        rate: '2500',
        source: 'http',
        rate_as_of: expect.any(String),
        quoted_at: expect.any(String),
      },
    });
    // quoted while the request was decided, before the session was written
    expect(Date.parse(s.quote.quoted_at)).toBeLessThanOrEqual(Date.parse(s.created_at));
    expect(s).not.toHaveProperty('amount');

    // part of it, then the rate doubles: the session still asks for the locked 0.01 ETH
    await chain.sendEth(1, s.address, 4_000_000_000_000_000n);
    await sessionWhen(t, m, s.session_id, 'the partial payment', (x) => x.status === 'partial_paid');
    gecko.prices.ethereum = { usd: '5000', eur: '4600', last_updated_at: nowS() };
    const later = await eventually('a new quote at 5,000 USD/ETH', async () => {
      const r = await create({ price: { amount: '25.00', currency: 'USD' }, paymentMethod: RAILS.eth });
      return r.status === 201 && r.body.quote.rate === '5000' ? r.body : null;
    });
    expect(later.expected_amount_subunits).toBe('5000000000000000');
    const locked = await get(s.session_id);
    expect(locked).toMatchObject({ status: 'partial_paid', expected_amount_subunits: '10000000000000000', quote: s.quote });

    // the rest and 1 wei more: completed against the locked amount, the overpayment kept visible
    await chain.sendEth(1, s.address, 6_000_000_000_000_001n);
    const done = await sessionWhen(t, m, s.session_id, 'completion', (x) => x.status === 'completed');
    expect(done).toMatchObject({
      expected_amount_subunits: '10000000000000000',
      received_amount_subunits: '10000000000000001',
      quote: s.quote,
    });
  });

  it('rounds up to the token’s smallest unit; EUR prices use the EUR rate', async () => {
    const usdc = await create({ price: { amount: '25.00', currency: 'USD' }, paymentMethod: RAILS.ethUsdc });
    expect(usdc.status).toBe(201);
    // 25 / 0.99991 = 25.0022502… USDC → 25.002251
    expect(usdc.body).toMatchObject({ expected_amount_subunits: '25002251', quote: { rate: '0.99991', amount: '25.00' } });
    const eur = await create({ price: { amount: '46', currency: 'EUR' }, paymentMethod: RAILS.eth });
    expect(eur.status).toBe(201);
    // the first test moved ETH to 4,600 EUR; ETH:EUR was never read before, so this is that rate
    expect(eur.body).toMatchObject({
      expected_amount_subunits: '10000000000000000',
      quote: { currency: 'EUR', amount: '46.00', rate: '4600' },
    });
  });

  it('an Idempotency-Key replay answers with the first quote, whatever the rate does meanwhile', async () => {
    const body = { price: { amount: '10.00', currency: 'USD' }, paymentMethod: RAILS.eth };
    const first = await create(body, { 'Idempotency-Key': 'fiat-once' });
    expect(first.status).toBe(201);
    gecko.prices.ethereum = { usd: '4000', eur: '3700', last_updated_at: nowS() };
    await eventually('the rate to move to 4,000', async () => {
      const r = await create({ price: { amount: '10.00', currency: 'USD' }, paymentMethod: RAILS.eth });
      return r.status === 201 && r.body.quote.rate === '4000';
    });
    const again = await create(body, { 'Idempotency-Key': 'fiat-once' });
    expect(again.status).toBe(201);
    expect(again.body.session_id).toBe(first.body.session_id);
    expect(again.body.quote).toEqual(first.body.quote);
    expect(again.body.expected_amount_subunits).toBe(first.body.expected_amount_subunits);
  });

  it('no fresh rate: 503 saying why (retryable when a source lags, not when none is configured); nothing is created', async () => {
    const before = (await t.request('GET', '/v1/payment_sessions?limit=100', { key: m.apiKey })).body.data.length;
    const stale = await create({ price: { amount: '25.00', currency: 'USD' }, paymentMethod: RAILS.sol });
    expect(stale.status).toBe(503);
    expect(stale.body).toMatchObject({ code: 1, retryable: true, remediation: expect.stringMatching(/again shortly/) });
    expect(stale.body.message).toMatch(/cannot price USD in SOL: .*SOL\/USD/);
    const none = await create({ price: { amount: '25.00', currency: 'GBP' }, paymentMethod: RAILS.eth });
    expect(none.status).toBe(503);
    expect(none.body).toMatchObject({ code: 1, retryable: false });
    expect(none.body.remediation).toMatch(/RATES_STATIC/);
    expect(none.body.message).toMatch(/ETH\/GBP/);
    expect((await t.request('GET', '/v1/payment_sessions?limit=100', { key: m.apiKey })).body.data).toHaveLength(before);
  });

  it('bad prices are 400s naming the field', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const r = await create({ paymentMethod: RAILS.eth, ...body });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(3);
      return r.body;
    };
    expect(await refused({ amount: 0.01, price: { amount: '25.00', currency: 'USD' } })).toMatchObject({
      field: 'price',
      message: expect.stringMatching(/exactly one of amount and price/),
    });
    expect(await refused({ amount_subunits: '1', price: { amount: '25.00', currency: 'USD' } })).toMatchObject({
      field: 'price',
      message: expect.stringMatching(/exactly one/),
    });
    expect(await refused({ price: { amount: '25.001', currency: 'USD' } })).toMatchObject({
      field: 'price.amount',
      message: expect.stringMatching(/more decimal places than USD has \(2\)/),
    });
    expect((await refused({ price: { amount: '25', currency: 'XXX' } })).message).toMatch(/price\.currency must be one of "USD"/);
    expect((await refused({ price: { amount: 25, currency: 'USD' } })).message).toMatch(/price\.amount must be of type string/);
    expect((await refused({ price: { amount: '25', currency: 'USD', rate: '1' } })).message).toMatch(/unknown field 'rate'/);
    // 0.01 USD at ≥ 2,500 USD/ETH is at most 0.000004 ETH: below the ETH rail's minimum of 0.00001
    expect(await refused({ price: { amount: '0.01', currency: 'USD' } })).toMatchObject({
      field: 'price.amount',
      message: expect.stringMatching(/^0\.01 USD is 0\.\d+ ETH at \d+ USD\/ETH, which is below the minimum of 0\.00001 ETH/),
    });
    expect((await refused({})).message).toMatch(/amount is required .* or price/);
  });
});

describe('payment sessions priced in fiat, static rates', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ RATE_SOURCES: '*=static', RATES_STATIC: 'ETH:USD=2500,SOL:USD=150.25,USDC:USD=1' });
  });
  afterAll(() => t?.stop());

  it('25.00 USD at a static 2,500 USD/ETH asks for 0.01 ETH; 1.00 USD at 150.25 USD/SOL for 0.006655575 SOL', async () => {
    const m = await merchant(t);
    const eth = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { price: { amount: '25.00', currency: 'USD' }, expires_in: '15m', paymentMethod: RAILS.eth },
    });
    expect(eth.status).toBe(201);
    expect(eth.body).toMatchObject({
      expected_amount: 0.01,
      expected_amount_subunits: '10000000000000000',
      quote: { currency: 'USD', amount: '25.00', rate: '2500', source: 'static' },
    });
    const sol = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: { price: { amount: '1.00', currency: 'USD' }, expires_in: '15m', paymentMethod: RAILS.sol },
    });
    expect(sol.status).toBe(201);
    expect(sol.body).toMatchObject({ expected_amount_subunits: '6655575', quote: { rate: '150.25' } });
  });

  it('a catalog price in USD checks out on any rail: the intent names the price, the session converts it and carries the quote', async () => {
    const m = await merchant(t);
    const catalog = new CatalogClient(t, { key: m.apiKey });
    const { price } = await catalog.published({ price: { amount_subunits: '2500', currency_or_token: 'USD' } });
    expect(price).toMatchObject({ amount_subunits: '2500', currency_or_token: 'USD', decimals: 2 });
    const intent = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
    expect(intent.status).toBe(200);
    expect(intent.body).toMatchObject({
      amount_subunits: '2500',
      currency_or_token: 'USD',
      decimals: 2,
      allowed_payment_methods: ['ethereum:testnet:USDC', 'ethereum:testnet:ETH', 'solana:testnet:USDC', 'solana:testnet:SOL'],
    });
    const metadata = { checkout_reference_id: intent.body.checkout_reference_id };
    const open = (body: Record<string, unknown>) =>
      t.request('POST', '/v1/payment_sessions', {
        key: m.apiKey,
        body: { expires_in: '15m', paymentMethod: RAILS.eth, metadata, ...body },
      });

    const s = await open({ price: { amount: '25.00', currency: 'USD' } });
    expect(s.status).toBe(201);
    expect(s.body).toMatchObject({
      expected_amount_subunits: '10000000000000000',
      quote: { currency: 'USD', amount: '25.00', rate: '2500' },
    });
    // the checkout's price, not another one, and not an amount in tokens
    const wrongPrice = await open({ price: { amount: '24.99', currency: 'USD' } });
    expect(wrongPrice.status).toBe(400);
    expect(wrongPrice.body.field).toBe('price');
    expect(wrongPrice.body.message).toMatch(/is priced at 25\.00 USD: create the session with price \{amount: "25\.00", currency: "USD"\}/);
    expect((await open({ price: { amount: '25.00', currency: 'EUR' } })).status).toBe(400);
    const tokens = await open({ amount: 0.01 });
    expect(tokens.status).toBe(400);
    expect(tokens.body.message).toMatch(/is priced at 25\.00 USD/);
  });

  it('an x402 challenge for a catalog price in USD asks for the tokens it is worth now, with its quote', async () => {
    const m = await merchant(t);
    const { price } = await new CatalogClient(t, { key: m.apiKey }).published({
      price: { amount_subunits: '500', currency_or_token: 'USD' },
    });
    const c = await t.request('POST', '/v1/x402/challenges', {
      key: m.apiKey,
      body: { resource: '/report', price_id: price.id, paymentMethod: { chain: 'solana', network: 'testnet', token: 'USDC' } },
    });
    expect(c.status).toBe(201);
    expect(c.body.challenge).toMatchObject({ amount: '5000000', maxAmountRequired: '5000000' });
    expect(c.body.quote).toMatchObject({ currency: 'USD', amount: '5.00', rate: '1', source: 'static' });
  });
});
