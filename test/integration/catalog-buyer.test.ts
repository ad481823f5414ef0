/**
 * Catalog, buyer side, through HTTP without credentials: discovery (visibility, filters, q search,
 * paging), one product, checkout intents (the publish-leaf-to-root rule, payment methods, snapshots)
 * and the checkout-reference check the sessions area calls.
 */
import { startTestNode, type HttpResult, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { CatalogClient } from './catalog-helpers.ts';

/** every product id a discovery query returns, following next_cursor to the end */
async function discoverAll(t: TestNode, query: string, limit = 100): Promise<{ ids: string[]; pages: number; items: any[] }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: HttpResult = await t.request(
      'GET',
      `/v1/catalog/products?${query}${query ? '&' : ''}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    if (res.status !== 200) throw new Error(`discovery: ${res.status} ${res.text}`);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    expect(res.body.has_more).toBe(res.body.next_cursor !== null);
    items.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  return { ids: items.map((p) => p.id), pages, items };
}

describe('catalog: buyer side', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let c: CatalogClient;
  let live: RegisteredMerchant;
  let lc: CatalogClient;
  const clock = { offsetMs: 0 };

  beforeAll(async () => {
    // mainnet rails enabled (an RPC URL is configured), so that sandbox filtering is visible
    t = await startTestNode(
      {
        RATE_LIMIT_PER_MINUTE: '100000',
        ETHEREUM_MAINNET_RPC_URL: 'http://127.0.0.1:9',
        SERVICES: 'api,catalog,merchants,merchant-actors,operators,discovery',
      },
      { now: () => new Date(Date.now() + clock.offsetMs) },
    );
    m = await registerMerchant(t);
    c = new CatalogClient(t, { key: m.apiKey });
    const user = await t.call('operators.createUser', { email: 'buyer-test-owner@trusted.test' });
    live = await registerMerchant(t, { bearer: user.bearer_token, name: 'Live shop' });
    lc = new CatalogClient(t, { key: live.apiKey });
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('discovery', () => {
    it('shows only published products of published stores, with published plans and prices nested', async () => {
      const { store, product, plan, price } = await c.published({ product: { name: 'Visible thing' } });
      const draftPlan = await c.plan(product.id, { name: 'Draft plan' });
      const archivedPlan = await c.plan(product.id, { name: 'Archived plan' });
      await c.publish('plans', archivedPlan.id);
      await c.ok('POST', `/v1/plans/${archivedPlan.id}/archive`);
      const draftPrice = await c.price(plan.id, { amount_subunits: '9000000' });

      const res = await t.request('GET', `/v1/catalog/products/${product.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: product.id,
        store_id: store.id,
        merchant_id: m.id,
        sandbox: true,
        name: 'Visible thing',
        slug: 'pro-api',
        description: 'Fast answers',
        fulfillment_type: 'subscription',
        status: 'published',
        version: 1,
        supersedes_product_id: null,
        store: { id: store.id, name: 'Main store', slug: 'main', description: 'Everything we sell' },
        plans: [
          {
            id: plan.id,
            product_id: product.id,
            name: 'Monthly',
            slug: 'monthly',
            entitlement: { seats: 5 },
            status: 'published',
            version: 1,
            supersedes_plan_id: null,
            prices: [
              {
                id: price.id,
                plan_id: plan.id,
                amount_subunits: '2500000',
                currency_or_token: 'USDC',
                decimals: 6,
                allowed_payment_methods: null,
                status: 'published',
                version: 1,
                supersedes_price_id: null,
              },
            ],
          },
        ],
      });
      const listed = (await discoverAll(t, `merchant_id=${m.id}`)).items.find((p) => p.id === product.id);
      expect(listed).toEqual(res.body);
      expect(JSON.stringify(listed)).not.toContain(draftPlan.id);
      expect(JSON.stringify(listed)).not.toContain(archivedPlan.id);
      expect(JSON.stringify(listed)).not.toContain(draftPrice.id);
    });

    it('hides drafts, archived products, and everything in a draft or archived store; a republished store shows again', async () => {
      const draftStore = await c.store({ name: 'Not yet' });
      const inDraftStore = await c.product(draftStore.id, { name: 'In a draft store' });
      await c.publish('products', inDraftStore.id);
      const { store, product } = await c.published({ product: { name: 'Comes and goes' } });
      const draftProduct = await c.product(store.id, { name: 'Draft product' });
      const archived = await c.product(store.id, { name: 'Archived product' });
      await c.publish('products', archived.id);
      await c.ok('POST', `/v1/products/${archived.id}/archive`);

      const visible = async () => (await discoverAll(t, `merchant_id=${m.id}`)).ids;
      const ids = await visible();
      expect(ids).toContain(product.id);
      for (const hidden of [inDraftStore.id, draftProduct.id, archived.id]) {
        expect(ids).not.toContain(hidden);
        expect((await t.request('GET', `/v1/catalog/products/${hidden}`)).status).toBe(404);
      }
      await c.ok('POST', `/v1/stores/${store.id}/archive`);
      expect(await visible()).not.toContain(product.id);
      expect((await t.request('GET', `/v1/catalog/products/${product.id}`)).status).toBe(404);
      await c.publish('stores', store.id);
      expect(await visible()).toContain(product.id);
      await c.publish('stores', draftStore.id);
      expect(await visible()).toContain(inDraftStore.id);
      expect((await t.request('GET', '/v1/catalog/products/prod_unknown')).body).toMatchObject({
        code: 2,
        message: 'product prod_unknown not found',
      });
    });

    it('shows the published version of a product, with the plans of the line', async () => {
      const { product, plan } = await c.published({ product: { name: 'Versioned v1' } });
      const v2 = (await c.req('PATCH', `/v1/products/${product.id}`, { name: 'Versioned v2' })).body;
      const ids = (await discoverAll(t, `merchant_id=${m.id}`)).ids;
      expect(ids).toContain(product.id);
      expect(ids).not.toContain(v2.id);
      await c.publish('products', v2.id);
      const found = await discoverAll(t, `merchant_id=${m.id}&q=versioned`);
      expect(found.ids).toEqual([v2.id]);
      expect(found.items[0]).toMatchObject({ name: 'Versioned v2', version: 2, supersedes_product_id: product.id });
      expect(found.items[0].plans.map((p: any) => [p.id, p.product_id])).toEqual([[plan.id, v2.id]]);
      expect((await t.request('GET', `/v1/catalog/products/${product.id}`)).status).toBe(404);
    });

    it('filters by merchant_id and sandbox', async () => {
      const a = await c.published({ product: { name: 'Sandbox filter item' } });
      const b = await lc.published({ product: { name: 'Live filter item' } });
      const sandboxOnly = await discoverAll(t, 'sandbox=true');
      expect(sandboxOnly.ids).toContain(a.product.id);
      expect(sandboxOnly.ids).not.toContain(b.product.id);
      expect(sandboxOnly.items.every((p) => p.sandbox === true)).toBe(true);
      const liveOnly = await discoverAll(t, 'sandbox=false');
      expect(liveOnly.ids).toContain(b.product.id);
      expect(liveOnly.ids).not.toContain(a.product.id);
      expect(liveOnly.items.every((p) => p.sandbox === false)).toBe(true);
      const byLive = await discoverAll(t, `merchant_id=${live.id}`);
      expect(byLive.items.every((p) => p.merchant_id === live.id)).toBe(true);
      expect(byLive.ids).toContain(b.product.id);
      expect((await discoverAll(t, `merchant_id=${live.id}&sandbox=true`)).ids).toEqual([]);
      expect((await discoverAll(t, 'merchant_id=mer_nobody')).ids).toEqual([]);
      const all = await discoverAll(t, '');
      expect(all.ids).toEqual(expect.arrayContaining([a.product.id, b.product.id]));
    });

    it('q searches name and description, case-insensitively, as a substring', async () => {
      const s = await c.store({ name: 'Search store' });
      await c.publish('stores', s.id);
      const mk = async (name: string, description: string) => {
        const p = await c.product(s.id, { name, description });
        await c.publish('products', p.id);
        return p.id;
      };
      const zebra = await mk('Zebra Stripes Deluxe', 'A painted horse');
      const quokka = await mk('Plain box', 'Contains one happy QUOKKA, 100% real');
      const cafe = await mk('CAFÉ CRÈME', 'coffee');
      const under = await mk('snake_case tool', 'renames things');
      const q = async (term: string) => (await discoverAll(t, `merchant_id=${m.id}&q=${encodeURIComponent(term)}`)).ids;
      expect(await q('zebra')).toEqual([zebra]);
      expect(await q('ZEBRA stripes')).toEqual([zebra]);
      expect(await q('painted HORSE')).toEqual([zebra]);
      expect(await q('quokka')).toEqual([quokka]);
      expect(await q('Quok')).toEqual([quokka]);
      expect(await q('100% real')).toEqual([quokka]);
      expect(await q('café crème')).toEqual([cafe]);
      expect(await q('e_c')).toEqual([under]);
      expect(await q('%')).toEqual([quokka]);
      expect(await q('ze')).toEqual([zebra]);
      // a short term scans: only within one merchant's catalog
      const short = await t.request('GET', '/v1/catalog/products?q=ze');
      expect(short.status).toBe(400);
      expect(short.body).toMatchObject({ code: 3, message: expect.stringMatching(/at least 3 characters, or a merchant_id/) });
      expect(await q('no such words anywhere')).toEqual([]);
      // q combines with the other filters
      expect((await discoverAll(t, `merchant_id=${live.id}&q=zebra`)).ids).toEqual([]);
      expect((await discoverAll(t, 'sandbox=true&q=zebra')).ids).toContain(zebra);
    });

    it('pages with cursor and limit to the end, newest first, also with q', async () => {
      const s = await c.store({ name: 'Paging store' });
      await c.publish('stores', s.id);
      const made: string[] = [];
      for (let i = 0; i < 23; i++) {
        const p = await c.product(s.id, { name: `Pageable gadget ${i}`, description: i % 2 ? 'odd one' : 'even one' });
        await c.publish('products', p.id);
        made.push(p.id);
      }
      const all = await discoverAll(t, `merchant_id=${m.id}&q=pageable`, 5);
      expect(all.pages).toBe(5);
      expect(all.ids).toEqual([...made].reverse());
      const odd = await discoverAll(t, `merchant_id=${m.id}&q=ODD%20one`, 4);
      expect(odd.ids).toEqual(made.filter((_, i) => i % 2).reverse());
      expect(odd.pages).toBe(3);
      const first = await t.request('GET', `/v1/catalog/products?merchant_id=${m.id}&q=pageable`);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.has_more).toBe(true);
      const exact = await t.request('GET', `/v1/catalog/products?merchant_id=${m.id}&q=pageable&limit=23`);
      expect(exact.body).toMatchObject({ has_more: false, next_cursor: null });
      expect(exact.body.data).toHaveLength(23);
    });

    it('refuses bad query parameters with 400', async () => {
      for (const q of ['limit=0', 'limit=101', 'limit=-1', 'cursor=abc', 'sandbox=yes', 'q=', 'store=1', `q=${'x'.repeat(201)}`]) {
        const res = await t.request('GET', `/v1/catalog/products?${q}`);
        expect([q, res.status, res.body.code]).toEqual([q, 400, 3]);
      }
    });
  });

  describe('checkout intents', () => {
    it('work only when price, plan, product and store are all published (leaf to root), and not archived', async () => {
      const store = await c.store();
      const product = await c.product(store.id);
      const plan = await c.plan(product.id);
      const price = await c.price(plan.id);
      const intent = () => t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      const refused = async (pattern: RegExp) => {
        const res = await intent();
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ code: 5, message: expect.stringMatching(pattern) });
      };
      await refused(/price .* is draft/);
      await c.publish('prices', price.id);
      await refused(/plan .* is not published/);
      await c.publish('plans', plan.id);
      await refused(/product .* is not published/);
      await c.publish('products', product.id);
      await refused(/store .* is not published/);
      // nothing was referenced by the refused attempts
      expect((await c.ok('GET', `/v1/prices/${price.id}`)).checkout_referenced).toBe(false);
      await c.publish('stores', store.id);
      const ok = await intent();
      expect(ok.status).toBe(200);

      await c.ok('POST', `/v1/stores/${store.id}/archive`);
      await refused(/store .* is not published/);
      await c.publish('stores', store.id);
      await c.ok('POST', `/v1/plans/${plan.id}/archive`);
      await refused(/plan .* is not published/);
      expect((await t.request('POST', '/v1/catalog/prices/price_nope/checkout-intent')).status).toBe(404);
    });

    it('returns the CheckoutIntent and marks price, plan and product checkout-referenced', async () => {
      const { store, product, plan, price } = await c.published();
      const before = Date.now();
      const res = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        checkout_reference_id: expect.stringMatching(/^cref_/),
        price_id: price.id,
        plan_id: plan.id,
        product_id: product.id,
        store_id: store.id,
        merchant_id: m.id,
        amount_subunits: '2500000',
        currency_or_token: 'USDC',
        decimals: 6,
        allowed_payment_methods: ['ethereum:testnet:USDC', 'solana:testnet:USDC'],
        expires_at: expect.any(String),
      });
      const ttl = Date.parse(res.body.expires_at) - before;
      expect(ttl).toBeGreaterThan(25 * 60_000);
      expect(ttl).toBeLessThanOrEqual(31 * 60_000);
      for (const [coll, id] of [
        ['prices', price.id],
        ['plans', plan.id],
        ['products', product.id],
      ]) {
        expect((await c.ok('GET', `/v1/${coll}/${id}`)).checkout_referenced).toBe(true);
      }
      expect((await c.ok('GET', `/v1/stores/${store.id}`)).status).toBe('published');
      // a second intent for the same price is another snapshot
      const again = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      expect(again.body.checkout_reference_id).not.toBe(res.body.checkout_reference_id);
      expect((await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`, { body: { amount: 1 } })).status).toBe(400);
    });

    it('concurrent intents for one price each get their own snapshot', async () => {
      const { price, product } = await c.published();
      const results = await Promise.all(
        Array.from({ length: 10 }, () => t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`)),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(new Set(results.map((r) => r.body.checkout_reference_id)).size).toBe(10);
      expect((await c.ok('GET', `/v1/products/${product.id}`)).checkout_referenced).toBe(true);
    });

    it("allowed_payment_methods = the price list (or every rail of the token) ∩ enabled rails ∩ the merchant's network", async () => {
      const rails = (await t.request('GET', '/v1/payment_methods')).body.map((r: any) => `${r.chain}:${r.network}:${r.token}`);
      expect(rails).toContain('ethereum:mainnet:USDC');
      expect(rails).not.toContain('solana:mainnet:USDC');
      const intentFor = async (client: CatalogClient, price: Record<string, unknown>) => {
        const { price: p } = await client.published({ price });
        return t.request('POST', `/v1/catalog/prices/${p.id}/checkout-intent`);
      };
      // live merchant: every enabled mainnet rail of the token, never a testnet one (free tokens)
      expect((await intentFor(lc, {})).body.allowed_payment_methods).toEqual(['ethereum:mainnet:USDC']);
      const liveOnTestnet = await lc.published({ price: { allowed_payment_methods: ['ethereum:testnet:USDC'] } });
      const refused = await t.request('POST', `/v1/catalog/prices/${liveOnTestnet.price.id}/checkout-intent`);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/live merchant is paid on mainnet only/);
      // sandbox merchant: testnet only
      expect((await intentFor(c, {})).body.allowed_payment_methods).toEqual(['ethereum:testnet:USDC', 'solana:testnet:USDC']);
      // the price's own list, kept to enabled rails (solana mainnet is known but not enabled here)
      expect(
        (await intentFor(lc, { allowed_payment_methods: ['solana:mainnet:USDC', 'ethereum:mainnet:USDC'] })).body.allowed_payment_methods,
      ).toEqual(['ethereum:mainnet:USDC']);
      expect((await intentFor(c, { currency_or_token: 'SOL', amount_subunits: '1000000000' })).body.allowed_payment_methods).toEqual([
        'solana:testnet:SOL',
      ]);
    });

    it('fails with a clear 409 before anything payable exists when the intersection is empty', async () => {
      const { product, plan, price } = await c.published({ price: { allowed_payment_methods: ['ethereum:mainnet:USDC'] } });
      const res = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        code: 5,
        message: expect.stringMatching(/cannot be paid now.*ethereum:mainnet:USDC.*sandbox merchant is paid on testnet only/),
      });
      for (const [coll, id] of [
        ['prices', price.id],
        ['plans', plan.id],
        ['products', product.id],
      ]) {
        expect((await c.ok('GET', `/v1/${coll}/${id}`)).checkout_referenced).toBe(false);
      }
      const notEnabled = await lc.published({ price: { allowed_payment_methods: ['solana:mainnet:USDC'] } });
      const res2 = await t.request('POST', `/v1/catalog/prices/${notEnabled.price.id}/checkout-intent`);
      expect(res2.status).toBe(409);
      expect(res2.body.message).toMatch(/none of its payment methods \(solana:mainnet:USDC\) is an enabled rail/);
    });
  });

  describe('catalog.checkCheckoutReference', () => {
    it('accepts the matching merchant, amount and rail; refuses everything else with a clear 400', async () => {
      const { price } = await c.published({ price: { allowed_payment_methods: ['solana:testnet:USDC'] } });
      const intent = (await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`)).body;
      const good = {
        merchant_id: m.id,
        checkout_reference_id: intent.checkout_reference_id,
        amount_subunits: '2500000',
        chain: 'solana',
        network: 'testnet',
        token: 'USDC',
      };
      expect(await t.call('catalog.checkCheckoutReference', good)).toMatchObject({ ok: true, price_id: price.id });
      expect(await t.call('catalog.checkCheckoutReference', { ...good, amount_subunits: '0002500000' })).toMatchObject({ ok: true });
      const refused = async (params: Record<string, unknown>, pattern: RegExp) => {
        const err = await t.call('catalog.checkCheckoutReference', params).then(
          () => null,
          (e: any) => e,
        );
        expect(err).not.toBeNull();
        expect([err.code, err.message]).toEqual([400, expect.stringMatching(pattern)]);
      };
      await refused({ ...good, checkout_reference_id: 'cref_unknown' }, /is unknown; resolve the price again/);
      await refused({ ...good, merchant_id: live.id }, /belongs to another merchant/);
      await refused({ ...good, amount_subunits: '2500001' }, /amount does not match.*2\.5 USDC \(2500000 smallest units\)/);
      await refused(
        { ...good, chain: 'ethereum' },
        /ethereum:testnet:USDC is not a payment method of checkout reference.*solana:testnet:USDC/,
      );
      await refused({ ...good, amount_subunits: 2500000 }, /amount_subunits must be a string of digits/);
      await refused({ ...good, token: undefined }, /token must be a non-empty string/);
      clock.offsetMs = 31 * 60_000;
      try {
        await refused(good, /expired at .*resolve the price again/);
      } finally {
        clock.offsetMs = 0;
      }
    });
  });
});
