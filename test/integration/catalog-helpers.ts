/** Shared steps of the catalog tests: a merchant's catalog built over HTTP, as a client would. */
import type { HttpResult, TestNode } from '../helpers/node.ts';

export interface Auth {
  key?: string;
  bearer?: string;
  headers?: Record<string, string>;
}

export class CatalogClient {
  t: TestNode;
  auth: Auth;
  constructor(t: TestNode, auth: Auth) {
    this.t = t;
    this.auth = auth;
  }

  req(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
    return this.t.request(method, path, { ...this.auth, body, headers: { ...(this.auth.headers ?? {}), ...headers } });
  }

  /** POST that must answer 201; returns the body */
  async created(path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
    const res = await this.req('POST', path, body, headers);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body;
  }

  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const res = await this.req(method, path, body);
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  }

  store(over: Record<string, unknown> = {}) {
    return this.created('/v1/stores', { name: 'Main store', slug: 'main', description: 'Everything we sell', ...over });
  }

  product(storeId: string, over: Record<string, unknown> = {}) {
    return this.created('/v1/products', {
      store_id: storeId,
      name: 'Pro API access',
      slug: 'pro-api',
      description: 'Fast answers',
      fulfillment_type: 'subscription',
      ...over,
    });
  }

  plan(productId: string, over: Record<string, unknown> = {}) {
    return this.created('/v1/plans', { product_id: productId, name: 'Monthly', slug: 'monthly', entitlement: { seats: 5 }, ...over });
  }

  price(planId: string, over: Record<string, unknown> = {}) {
    return this.created('/v1/prices', { plan_id: planId, amount_subunits: '2500000', currency_or_token: 'USDC', ...over });
  }

  publish(collection: string, id: string) {
    return this.ok('POST', `/v1/${collection}/${id}/publish`);
  }

  /** store → product → plan → price, all published */
  async published(over: { product?: Record<string, unknown>; price?: Record<string, unknown>; storeId?: string } = {}) {
    const store = over.storeId ? { id: over.storeId } : await this.store();
    const product = await this.product(store.id, over.product);
    const plan = await this.plan(product.id);
    const price = await this.price(plan.id, over.price);
    await this.publish('prices', price.id);
    await this.publish('plans', plan.id);
    await this.publish('products', product.id);
    if (!over.storeId) await this.publish('stores', store.id);
    return { store, product, plan, price };
  }
}
