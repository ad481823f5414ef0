/**
 * Catalog, merchant side, through HTTP: the state table of stores, products, plans and prices, the
 * Idempotency-Key rules, credentials (X-API-Key, bearer with X-Merchant-Id), ownership and validation.
 */
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { registerMerchant, type RegisteredMerchant } from '../helpers/merchant.ts';
import { CatalogClient } from './catalog-helpers.ts';

const MISMATCH = 'idempotency key was already used with a different payload';

describe('catalog: merchant side', () => {
  let t: TestNode;
  let m: RegisteredMerchant;
  let c: CatalogClient;
  let other: CatalogClient;

  beforeAll(async () => {
    t = await startTestNode({ RATE_LIMIT_PER_MINUTE: '100000' });
    m = await registerMerchant(t);
    c = new CatalogClient(t, { key: m.apiKey });
    other = new CatalogClient(t, { key: (await registerMerchant(t)).apiKey });
  });
  afterAll(async () => {
    await t.stop();
  });

  describe('stores', () => {
    it('create → draft 201 with Location; get; PATCH in place in every status; publish again after archive', async () => {
      const res = await c.req('POST', '/v1/stores', { name: 'Shop', slug: 'shop', description: 'd' });
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/v1/stores/${res.body.id}`);
      expect(res.body).toMatchObject({
        id: expect.stringMatching(/^store_/),
        merchant_id: m.id,
        name: 'Shop',
        slug: 'shop',
        description: 'd',
        status: 'draft',
      });
      const id = res.body.id;
      expect(await c.ok('GET', `/v1/stores/${id}`)).toMatchObject({ id, status: 'draft' });

      expect(await c.ok('PATCH', `/v1/stores/${id}`, { name: 'Shop 2' })).toMatchObject({ id, name: 'Shop 2', status: 'draft' });
      expect(await c.publish('stores', id)).toMatchObject({ id, status: 'published' });
      // publishing a published store again is a 200 no-op
      expect(await c.publish('stores', id)).toMatchObject({ id, status: 'published' });
      const patched = await c.req('PATCH', `/v1/stores/${id}`, { description: null });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ id, status: 'published', description: null });
      expect(await c.ok('POST', `/v1/stores/${id}/archive`)).toMatchObject({ id, status: 'archived' });
      expect(await c.ok('POST', `/v1/stores/${id}/archive`)).toMatchObject({ id, status: 'archived' });
      expect(await c.ok('PATCH', `/v1/stores/${id}`, { name: 'Shop 3' })).toMatchObject({ id, name: 'Shop 3', status: 'archived' });
      expect(await c.publish('stores', id)).toMatchObject({ id, status: 'published', name: 'Shop 3' });
    });

    it('DELETE: a never-published draft without products is deleted; otherwise 409 telling to archive', async () => {
      const s = await c.store();
      const del = await c.req('DELETE', `/v1/stores/${s.id}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ id: s.id, object: 'store', deleted: true });
      expect((await c.req('GET', `/v1/stores/${s.id}`)).status).toBe(404);

      const withProduct = await c.store();
      await c.product(withProduct.id);
      const refused = await c.req('DELETE', `/v1/stores/${withProduct.id}`);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 5, message: expect.stringMatching(/has 1 products.*archive/) });

      const published = await c.store();
      await c.publish('stores', published.id);
      const r2 = await c.req('DELETE', `/v1/stores/${published.id}`);
      expect(r2.status).toBe(409);
      expect(r2.body.message).toMatch(/archive it instead/);
      await c.ok('POST', `/v1/stores/${published.id}/archive`);
      expect((await c.req('DELETE', `/v1/stores/${published.id}`)).status).toBe(409);
    });
  });

  describe.each([
    ['products', 'product'],
    ['plans', 'plan'],
    ['prices', 'price'],
  ])('%s: the state table', (collection, kind) => {
    const patchBody: Record<string, Record<string, unknown>> = {
      product: { name: 'Renamed', description: 'New words' },
      plan: { name: 'Yearly', entitlement: { seats: 50 } },
      price: { amount_subunits: '3000000' },
    };
    const changed: Record<string, Record<string, unknown>> = {
      product: { name: 'Renamed', description: 'New words' },
      plan: { name: 'Yearly', entitlement: { seats: 50 } },
      price: { amount_subunits: '3000000' },
    };
    const supersedes = `supersedes_${kind}_id`;

    /** a fresh draft of this kind (with draft parents) */
    async function draft(): Promise<any> {
      const s = await c.store();
      const p = await c.product(s.id);
      if (kind === 'product') return p;
      const pl = await c.plan(p.id);
      if (kind === 'plan') return pl;
      return c.price(pl.id);
    }

    it('create → draft 201, version 1', async () => {
      const row = await draft();
      expect(row).toMatchObject({ status: 'draft', version: 1, [supersedes]: null, checkout_referenced: false });
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toEqual(row);
    });

    it('PATCH of a draft changes it in place (200, same id)', async () => {
      const row = await draft();
      const res = await c.req('PATCH', `/v1/${collection}/${row.id}`, patchBody[kind]);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: row.id, status: 'draft', version: 1, ...changed[kind] });
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toMatchObject(changed[kind]);
    });

    it('publish: draft → published (200); publishing again is 409', async () => {
      const row = await draft();
      expect(await c.publish(collection, row.id)).toMatchObject({ id: row.id, status: 'published' });
      const again = await c.req('POST', `/v1/${collection}/${row.id}/publish`);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: 5, message: expect.stringMatching(/only a draft can be published/) });
    });

    it('PATCH of a published one creates a new draft version (201, new id, version + 1, supersedes set) and leaves the old row untouched', async () => {
      const row = await draft();
      const published = await c.publish(collection, row.id);
      const res = await c.req('PATCH', `/v1/${collection}/${row.id}`, patchBody[kind]);
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/v1/${collection}/${res.body.id}`);
      expect(res.body.id).not.toBe(row.id);
      expect(res.body).toMatchObject({ status: 'draft', version: 2, [supersedes]: row.id, checkout_referenced: false, ...changed[kind] });
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toEqual(published);
      // the next PATCH of the published one is version 3
      const third = await c.req('PATCH', `/v1/${collection}/${row.id}`, patchBody[kind]);
      expect(third.status).toBe(201);
      expect(third.body).toMatchObject({ version: 3, [supersedes]: row.id });
      // a new version can be published; it replaces the published one
      expect(await c.publish(collection, res.body.id)).toMatchObject({ id: res.body.id, status: 'published' });
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toMatchObject({ status: 'archived' });
    });

    it('archive from draft and from published; archiving again is a 200 no-op; an archived one cannot be published', async () => {
      const a = await draft();
      expect(await c.ok('POST', `/v1/${collection}/${a.id}/archive`)).toMatchObject({ id: a.id, status: 'archived' });
      const again = await c.ok('POST', `/v1/${collection}/${a.id}/archive`);
      expect(again).toMatchObject({ id: a.id, status: 'archived' });
      expect(await c.ok('GET', `/v1/${collection}/${a.id}`)).toEqual(again);
      expect((await c.req('POST', `/v1/${collection}/${a.id}/publish`)).status).toBe(409);
      const b = await draft();
      await c.publish(collection, b.id);
      expect(await c.ok('POST', `/v1/${collection}/${b.id}/archive`)).toMatchObject({ id: b.id, status: 'archived' });
    });

    it('DELETE only a never-published draft; published, archived after publishing, or checkout-referenced: 409 telling to archive', async () => {
      const a = await draft();
      expect(await c.ok('DELETE', `/v1/${collection}/${a.id}`)).toEqual({ id: a.id, object: kind, deleted: true });
      expect((await c.req('GET', `/v1/${collection}/${a.id}`)).status).toBe(404);

      const b = await draft();
      await c.publish(collection, b.id);
      const r = await c.req('DELETE', `/v1/${collection}/${b.id}`);
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: 5, message: expect.stringMatching(/cannot be deleted; archive it instead/) });
      await c.ok('POST', `/v1/${collection}/${b.id}/archive`);
      expect((await c.req('DELETE', `/v1/${collection}/${b.id}`)).status).toBe(409);
      expect((await c.req('GET', `/v1/${collection}/${b.id}`)).status).toBe(200);
    });

    it('checkout-referenced: PATCH versions it, DELETE is refused', async () => {
      const { product, plan, price } = await c.published();
      const row = { product, plan, price }[kind as 'product' | 'plan' | 'price'];
      const intent = await t.request('POST', `/v1/catalog/prices/${price.id}/checkout-intent`);
      expect(intent.status).toBe(200);
      const referenced = await c.ok('GET', `/v1/${collection}/${row.id}`);
      expect(referenced).toMatchObject({ status: 'published', checkout_referenced: true });
      const res = await c.req('PATCH', `/v1/${collection}/${row.id}`, patchBody[kind]);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ version: 2, [supersedes]: row.id, status: 'draft', checkout_referenced: false });
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toEqual(referenced);
      await c.ok('POST', `/v1/${collection}/${row.id}/archive`);
      const del = await c.req('DELETE', `/v1/${collection}/${row.id}`);
      expect(del.status).toBe(409);
      expect(del.body.message).toMatch(/archive it instead/);
      // an archived version can be PATCHed into a new draft version too
      expect((await c.req('PATCH', `/v1/${collection}/${row.id}`, patchBody[kind])).body).toMatchObject({ version: 3, status: 'draft' });
    });

    it("another merchant's id is a 404 for every operation", async () => {
      const row = await draft();
      for (const [method, path, body] of [
        ['GET', `/v1/${collection}/${row.id}`, undefined],
        ['PATCH', `/v1/${collection}/${row.id}`, patchBody[kind]],
        ['DELETE', `/v1/${collection}/${row.id}`, undefined],
        ['POST', `/v1/${collection}/${row.id}/publish`, undefined],
        ['POST', `/v1/${collection}/${row.id}/archive`, undefined],
      ] as const) {
        const res = await other.req(method, path, body);
        expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 2]);
      }
      expect(await c.ok('GET', `/v1/${collection}/${row.id}`)).toEqual(row);
    });
  });

  describe('parents and versions', () => {
    it("a create naming another merchant's parent is 404; an archived parent is 409", async () => {
      const s = await c.store();
      const p = await c.product(s.id);
      const pl = await c.plan(p.id);
      expect((await other.req('POST', '/v1/products', { store_id: s.id, name: 'x', fulfillment_type: 'service' })).status).toBe(404);
      expect((await other.req('POST', '/v1/plans', { product_id: p.id, name: 'x' })).status).toBe(404);
      expect(
        (await other.req('POST', '/v1/prices', { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC' })).status,
      ).toBe(404);
      await c.ok('POST', `/v1/products/${p.id}/archive`);
      const res = await c.req('POST', '/v1/plans', { product_id: p.id, name: 'x' });
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(/archived/);
    });

    it('concurrent PATCHes of a published product make distinct versions; concurrent publishes leave one published', async () => {
      const s = await c.store();
      const p = await c.product(s.id);
      await c.publish('products', p.id);
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => c.req('PATCH', `/v1/products/${p.id}`, { name: `Edit ${i}` })));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
      expect(results.map((r) => r.body.version).sort()).toEqual([2, 3, 4, 5, 6, 7]);
      const published = await Promise.all(results.map((r) => c.req('POST', `/v1/products/${r.body.id}/publish`)));
      expect(published.map((r) => r.status)).toEqual(Array(6).fill(200));
      const line = (await c.ok('GET', `/v1/products?store_id=${s.id}&status=published`)).data;
      expect(line).toHaveLength(1);
    });

    it('a new product version keeps its plans; list filters follow the product line', async () => {
      const { product, plan } = await c.published();
      const v2 = (await c.req('PATCH', `/v1/products/${product.id}`, { name: 'Pro API access v2' })).body;
      const extra = await c.plan(v2.id, { name: 'Yearly' });
      const plans = await c.ok('GET', `/v1/plans?product_id=${v2.id}`);
      expect(plans.data.map((p: any) => p.id).sort()).toEqual([plan.id, extra.id].sort());
      expect((await c.ok('GET', `/v1/plans?product_id=${product.id}`)).data).toHaveLength(2);
    });
  });

  describe('lists', () => {
    it('pages newest first with cursor and limit to the end; filters by status and parent', async () => {
      const s = await c.store({ name: 'Paging' });
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await c.product(s.id, { name: `P${i}` })).id);
      await c.publish('products', made[2]);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: any = await c.ok('GET', `/v1/products?store_id=${s.id}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.data.length).toBeLessThanOrEqual(3);
        seen.push(...page.data.map((p: any) => p.id));
        expect(page.has_more).toBe(page.next_cursor !== null);
        cursor = page.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual([...made].reverse());
      const published = await c.ok('GET', `/v1/products?store_id=${s.id}&status=published`);
      expect(published.data.map((p: any) => p.id)).toEqual([made[2]]);
      const def = await c.ok('GET', '/v1/products');
      expect(def.data.length).toBeLessThanOrEqual(20);
      expect(def.data.every((p: any) => p.merchant_id === m.id)).toBe(true);
      // the other merchant sees none of them
      expect((await other.ok('GET', `/v1/products?limit=100`)).data.some((p: any) => made.includes(p.id))).toBe(false);
      expect((await other.req('GET', `/v1/products?store_id=${s.id}`)).status).toBe(404);
    });

    it('refuses bad paging input with 400', async () => {
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=nonsense', 'cursor=%2F%2F', 'color=red', 'status=gone']) {
        const res = await c.req('GET', `/v1/stores?${q}`);
        expect([q, res.status, res.body.code]).toEqual([q, 400, 3]);
      }
      expect((await c.ok('GET', '/v1/stores?limit=100')).data.length).toBeGreaterThan(0);
    });
  });

  describe('validation', () => {
    it('refuses unknown fields and bad values with 400 and changes nothing', async () => {
      const before = (await c.ok('GET', '/v1/stores?limit=100')).data.length;
      const s = await c.store();
      const p = await c.product(s.id);
      const pl = await c.plan(p.id);
      const cases: Array<[string, unknown, RegExp]> = [
        ['/v1/stores', { name: 'x', color: 'red' }, /unknown field 'color'/],
        ['/v1/stores', { slug: 'x' }, /name is required/],
        ['/v1/products', { store_id: s.id, name: 'x', fulfillment_type: 'rental' }, /fulfillment_type must be one of/],
        ['/v1/products', { store_id: s.id, name: 'x', fulfillment_type: 'service', sandbox: true }, /unknown field 'sandbox'/],
        ['/v1/plans', { product_id: p.id, name: 'x', entitlement: 'gold' }, /entitlement must be of type object/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: 2500000, currency_or_token: 'USDC' }, /amount_subunits must be of type string/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: '2.5', currency_or_token: 'USDC' }, /amount_subunits/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: '0', currency_or_token: 'USDC' }, /positive integer/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: '0100', currency_or_token: 'USDC' }, /without leading zeros/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: '100', currency_or_token: 'USDC' }, /below the minimum/],
        ['/v1/prices', { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'BTC' }, /not the token of an enabled rail/],
        [
          '/v1/prices',
          { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['bitcoin:mainnet:BTC'] },
          /not a known rail/,
        ],
        [
          '/v1/prices',
          { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['solana:testnet:SOL'] },
          /is for SOL, but currency_or_token is USDC/,
        ],
        [
          '/v1/prices',
          { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: [] },
          /allowed_payment_methods/,
        ],
        [
          '/v1/prices',
          { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC', allowed_payment_methods: ['solana-testnet-USDC'] },
          /allowed_payment_methods/,
        ],
      ];
      for (const [path, body, message] of cases) {
        const res = await c.req('POST', path, body);
        expect([path, JSON.stringify(body), res.status, res.body.code]).toEqual([path, JSON.stringify(body), 400, 3]);
        expect(res.body.message).toMatch(message);
      }
      for (const [path, body] of [
        [`/v1/stores/${s.id}`, { merchant_id: 'mer_x' }],
        [`/v1/products/${p.id}`, { store_id: s.id }],
        [`/v1/plans/${pl.id}`, {}],
        [`/v1/products/${p.id}`, { status: 'published' }],
      ] as const) {
        const res = await c.req('PATCH', path, body);
        expect([path, res.status]).toEqual([path, 400]);
      }
      expect((await c.req('POST', `/v1/stores/${s.id}/publish`, { now: true })).status).toBe(400);
      expect((await c.ok('GET', `/v1/prices?plan_id=${pl.id}`)).data).toEqual([]);
      expect((await c.ok('GET', '/v1/stores?limit=100')).data.length).toBe(before + 1);
      expect(await c.ok('GET', `/v1/stores/${s.id}`)).toMatchObject({ status: 'draft', name: 'Main store' });
    });

    it('validates a price PATCH as a whole: amount against the token, methods against the rails', async () => {
      const s = await c.store();
      const pl = await c.plan((await c.product(s.id)).id);
      const price = await c.price(pl.id, { allowed_payment_methods: ['solana:testnet:USDC'] });
      expect(price).toMatchObject({ decimals: 6, allowed_payment_methods: ['solana:testnet:USDC'] });
      const bad = await c.req('PATCH', `/v1/prices/${price.id}`, { currency_or_token: 'SOL' });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/is for USDC, but currency_or_token is SOL/);
      const sol = await c.ok('PATCH', `/v1/prices/${price.id}`, {
        currency_or_token: 'SOL',
        allowed_payment_methods: null,
        amount_subunits: '500000000',
      });
      expect(sol).toMatchObject({ id: price.id, currency_or_token: 'SOL', decimals: 9, allowed_payment_methods: null });
      // a known rail that is not enabled (mainnet without its RPC URL) may be listed
      const mainnet = await c.price(pl.id, { allowed_payment_methods: ['ethereum:mainnet:USDC', 'ethereum:testnet:USDC'] });
      expect(mainnet.allowed_payment_methods).toEqual(['ethereum:mainnet:USDC', 'ethereum:testnet:USDC']);
    });

    it('needs credentials', async () => {
      for (const [method, path] of [
        ['GET', '/v1/stores'],
        ['POST', '/v1/stores'],
        ['GET', '/v1/products/prod_x'],
        ['POST', '/v1/prices/price_x/publish'],
      ]) {
        const res = await t.request(method, path, { body: method === 'POST' ? {} : undefined });
        expect([path, res.status, res.body]).toMatchObject([path, 401, { code: 7, message: 'missing or invalid authorization header' }]);
      }
      expect((await t.request('GET', '/v1/stores', { key: 'service_sk_test_abcdefghijklmnopqrstuvwxyz' })).status).toBe(401);
    });
  });

  describe('Idempotency-Key', () => {
    it('same key and payload within 24 h → the original resource with 201; different payload → 409 code 5', async () => {
      const s = await c.store();
      const body = { store_id: s.id, name: 'Once', fulfillment_type: 'one_time' };
      const first = await c.req('POST', '/v1/products', body, { 'Idempotency-Key': 'prod-once-1' });
      expect(first.status).toBe(201);
      await c.publish('products', first.body.id);
      const replay = await c.req(
        'POST',
        '/v1/products',
        { fulfillment_type: 'one_time', name: 'Once', store_id: s.id },
        { 'Idempotency-Key': 'prod-once-1' },
      );
      expect(replay.status).toBe(201);
      expect(replay.body).toEqual(first.body);
      expect(replay.headers.get('location')).toBe(`/v1/products/${first.body.id}`);
      const mismatch = await c.req('POST', '/v1/products', { ...body, name: 'Twice' }, { 'Idempotency-Key': 'prod-once-1' });
      expect(mismatch.status).toBe(409);
      expect(mismatch.body).toMatchObject({ code: 5, message: MISMATCH });
      expect((await c.ok('GET', `/v1/products?store_id=${s.id}`)).data).toHaveLength(1);
    });

    it('works on all four creates; a key is scoped to the merchant and to the resource type', async () => {
      const key = 'shared-key-1';
      const s = await c.created('/v1/stores', { name: 'K' }, { 'Idempotency-Key': key });
      expect((await c.req('POST', '/v1/stores', { name: 'K' }, { 'Idempotency-Key': key })).body.id).toBe(s.id);
      const p = await c.created('/v1/products', { store_id: s.id, name: 'K', fulfillment_type: 'metered' }, { 'Idempotency-Key': key });
      const pl = await c.created('/v1/plans', { product_id: p.id, name: 'K' }, { 'Idempotency-Key': key });
      const pr = await c.created(
        '/v1/prices',
        { plan_id: pl.id, amount_subunits: '1000000', currency_or_token: 'USDC' },
        { 'Idempotency-Key': key },
      );
      expect(new Set([s.id, p.id, pl.id, pr.id]).size).toBe(4);
      expect((await c.req('POST', '/v1/plans', { product_id: p.id, name: 'K' }, { 'Idempotency-Key': key })).body.id).toBe(pl.id);
      expect(
        (
          await c.req(
            'POST',
            '/v1/prices',
            { plan_id: pl.id, amount_subunits: '2000000', currency_or_token: 'USDC' },
            { 'Idempotency-Key': key },
          )
        ).status,
      ).toBe(409);
      // the same key used by another merchant is that merchant's own key
      const theirs = await other.req('POST', '/v1/stores', { name: 'K' }, { 'Idempotency-Key': key });
      expect(theirs.status).toBe(201);
      expect(theirs.body.id).not.toBe(s.id);
      expect(theirs.body.merchant_id).not.toBe(m.id);
    });

    it('20 concurrent requests with one key create exactly one resource', async () => {
      const s = await c.store();
      const body = { store_id: s.id, name: 'Concurrent', fulfillment_type: 'service' };
      const results = await Promise.all(
        Array.from({ length: 20 }, () => c.req('POST', '/v1/products', body, { 'Idempotency-Key': 'concurrent-key' })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect((await c.ok('GET', `/v1/products?store_id=${s.id}`)).data.map((p: any) => p.id)).toEqual([results[0].body.id]);
    });

    it('20 concurrent creates without a key under one draft parent all succeed', async () => {
      const s = await c.store();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => c.req('POST', '/v1/products', { store_id: s.id, name: `N${i}`, fulfillment_type: 'service' })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect((await c.ok('GET', `/v1/products?store_id=${s.id}&limit=100`)).data).toHaveLength(20);
    });

    it('a bad request with a key records nothing; the key can then be used', async () => {
      const bad = await c.req('POST', '/v1/stores', { name: '' }, { 'Idempotency-Key': 'fix-me' });
      expect(bad.status).toBe(400);
      const good = await c.req('POST', '/v1/stores', { name: 'Fixed' }, { 'Idempotency-Key': 'fix-me' });
      expect(good.status).toBe(201);
      expect((await c.req('POST', '/v1/stores', { name: 'x' }, { 'Idempotency-Key': 'x'.repeat(256) })).status).toBe(400);
    });
  });

  describe('bearer callers', () => {
    it('act for the merchants they own; X-Merchant-Id picks one when they own several', async () => {
      const user = await t.call('operators.createUser', { email: `owner${Date.now()}@trusted.test` });
      const bearer = user.bearer_token as string;
      const none = await t.request('GET', '/v1/stores', { bearer });
      expect(none.status).toBe(403);
      expect(none.body).toMatchObject({ code: 7, message: expect.stringMatching(/owns no merchant/) });

      const live1 = await registerMerchant(t, { bearer, name: 'Live One' });
      const asUser = new CatalogClient(t, { bearer });
      const s = await asUser.store({ name: 'Bearer store' });
      expect(s.merchant_id).toBe(live1.id);
      const p = await asUser.product(s.id);
      expect(p).toMatchObject({ merchant_id: live1.id, sandbox: false });
      // the same resources through the merchant's API key
      expect(await new CatalogClient(t, { key: live1.apiKey }).ok('GET', `/v1/products/${p.id}`)).toEqual(p);

      const live2 = await registerMerchant(t, { bearer, name: 'Live Two' });
      const ambiguous = await asUser.req('GET', '/v1/stores');
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.body.message).toMatch(/X-Merchant-Id/);
      const as1 = new CatalogClient(t, { bearer, headers: { 'X-Merchant-Id': live1.id } });
      const as2 = new CatalogClient(t, { bearer, headers: { 'X-Merchant-Id': live2.id } });
      expect((await as1.ok('GET', '/v1/stores')).data.map((x: any) => x.id)).toEqual([s.id]);
      expect((await as2.ok('GET', '/v1/stores')).data).toEqual([]);
      expect((await as2.req('GET', `/v1/stores/${s.id}`)).status).toBe(404);
      const s2 = await as2.store({ name: 'Second' });
      expect(s2.merchant_id).toBe(live2.id);

      const notMine = await asUser.req('GET', '/v1/stores', undefined, { 'X-Merchant-Id': m.id });
      expect(notMine.status).toBe(403);
      expect(notMine.body.code).toBe(7);
      // with an API key, X-Merchant-Id must be the key's merchant
      expect((await c.req('GET', '/v1/stores', undefined, { 'X-Merchant-Id': live1.id })).status).toBe(403);
      expect((await c.req('GET', '/v1/stores', undefined, { 'X-Merchant-Id': m.id })).status).toBe(200);
      expect((await t.request('GET', '/v1/stores', { bearer: 'usr_not-a-real-token-000000' })).status).toBe(401);
    });
  });
});
