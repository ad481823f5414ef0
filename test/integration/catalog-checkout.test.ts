/**
 * From a discovered product to a completed sandbox payment session, through a checkout intent, all over
 * HTTP: a buyer finds the product without credentials, resolves a price, and the merchant's session
 * created with metadata.checkout_reference_id is checked against the snapshot and then simulated.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { fromSubunits } from '../../lib/core/money.ts';
import { CatalogClient } from './catalog-helpers.ts';

describe('catalog → checkout intent → payment session', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let c: CatalogClient;

  beforeAll(async () => {
    t = await startTestNode({ RATE_LIMIT_PER_MINUTE: '100000' });
    m = await registerMerchant(t);
    c = new CatalogClient(t, { key: m.apiKey });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a buyer discovers a product, resolves a price, and the sandbox session it pays completes', async () => {
    await c.published({
      product: { name: 'Translation API', description: 'Neural translation for 40 languages' },
      price: { amount_subunits: '1500000' },
    });

    // the buyer, without credentials
    const found = await t.request(
      'GET',
      `/v1/catalog/products?merchant_id=${m.id}&sandbox=true&q=${encodeURIComponent('NEURAL translation')}`,
    );
    expect(found.status).toBe(200);
    expect(found.body.data).toHaveLength(1);
    const product = found.body.data[0];
    const price = product.plans[0].prices[0];
    expect(price).toMatchObject({ amount_subunits: '1500000', currency_or_token: 'USDC', status: 'published' });
    const intentRes = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
    expect(intentRes.status).toBe(200);
    const intent = intentRes.body;
    expect(intent).toMatchObject({ product_id: product.id, merchant_id: m.id, amount_subunits: '1500000' });
    const [chain, network, token] = intent.allowed_payment_methods[0].split(':');

    // the merchant creates the session for exactly that price on an allowed rail
    const amount = Number(fromSubunits(intent.amount_subunits, intent.decimals));
    const session = await t.request('POST', '/v1/payment_sessions', {
      key: m.apiKey,
      body: {
        amount,
        expires_in: '15m',
        paymentMethod: { methodID: 0, chain, network, token },
        metadata: { checkout_reference_id: intent.checkout_reference_id },
      },
    });
    expect(session.status).toBe(201);
    expect(session.body).toMatchObject({
      status: 'pending',
      expected_amount: 1.5,
      metadata: { checkout_reference_id: intent.checkout_reference_id },
    });

    const done = await t.request('POST', `/v1/payment_sessions/${session.body.session_id}/simulate`, { key: m.apiKey });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ session_id: session.body.session_id, status: 'completed', received_amount: 1.5 });
    expect((await t.request('GET', `/v1/payment_sessions/${session.body.session_id}`, { key: m.apiKey })).body.status).toBe('completed');

    // the price is now checkout-referenced: a PATCH makes a new version, the sold one stays as it was
    const patched = await c.req('PATCH', `/v1/prices/${price.id}`, { amount_subunits: '2000000' });
    expect(patched.status).toBe(201);
    expect((await c.ok('GET', `/v1/prices/${price.id}`)).amount_subunits).toBe('1500000');
  });

  it('refuses a session that does not match the snapshot, before anything is payable', async () => {
    const { price } = await c.published({ price: { amount_subunits: '2000000', allowed_payment_methods: ['solana:testnet:USDC'] } });
    const intent = (await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`)).body;
    const create = (key: string, body: Record<string, unknown>) =>
      t.request('POST', '/v1/payment_sessions', {
        key,
        body: {
          amount: 2,
          expires_in: '15m',
          paymentMethod: { methodID: 0, chain: 'solana', network: 'testnet', token: 'USDC' },
          metadata: { checkout_reference_id: intent.checkout_reference_id },
          ...body,
        },
      });
    const wrongAmount = await create(m.apiKey, { amount: 1.99 });
    expect(wrongAmount.status).toBe(400);
    expect(wrongAmount.body).toMatchObject({ code: 3, message: expect.stringMatching(/amount does not match checkout reference.*2 USDC/) });
    const wrongRail = await create(m.apiKey, { paymentMethod: { methodID: 0, chain: 'ethereum', network: 'testnet', token: 'USDC' } });
    expect(wrongRail.status).toBe(400);
    expect(wrongRail.body.message).toMatch(/ethereum:testnet:USDC is not a payment method of checkout reference/);
    const unknown = await create(m.apiKey, { metadata: { checkout_reference_id: 'cref_00000000000000000000000000' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/is unknown/);
    const other = await registerMerchant(t);
    const foreign = await create(other.apiKey, {});
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toMatch(/belongs to another merchant/);
    expect((await create(m.apiKey, {})).status).toBe(201);
  });

  it('withdraws a checkout intent whose store was archived while it was being made', async () => {
    const { store, price } = await c.published();
    const rt = t.node.rt;
    const write = rt.store.write.bind(rt.store);
    // the archive commits between the intent's reads and its write, as a concurrent request could
    rt.store.write = async (ops) => {
      if (ops.some((op) => op.op === 'insert' && op.coll === 'catalog_checkout_refs')) {
        rt.store.write = write;
        expect((await c.req('POST', `/v1/stores/${store.id}/archive`)).status).toBe(200);
      }
      return write(ops);
    };
    try {
      const res = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 5, message: expect.stringMatching(/archived while the checkout intent was made/) });
      expect(await rt.store.count('catalog_checkout_refs', { price_id: price.id })).toBe(0);
    } finally {
      rt.store.write = write;
    }
  });
});
