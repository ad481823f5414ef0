/**
 * The buyer side of the catalog, without credentials: discovery of published products (nested with
 * their published plans and prices) and checkout intents, plus the check a payment session makes
 * against a checkout snapshot.
 */
import type { Runtime } from '../runtime/index.ts';
import { badRequest, conflict, notFound, invalidCursor, invalidLimit } from '../core/errors.ts';
import { limitInStore } from '../core/rate-limit.ts';
import { newId } from '../core/ids.ts';
import { validate } from '../http/validation.ts';
import { fromSubunits } from '../core/money.ts';
import { formatFiat, isFiatCurrency } from '../rates/quote.ts';
import { findRail } from '../../config/rails.ts';
import type { Doc, Filter, Lookup, WriteOp } from '../store/port.ts';
import { allowedKeys, railPolicyRefusal, type RailPolicy } from '../merchants/rail-policy.ts';
import { checkoutMethods, sameAmount } from './rules.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../core/paging.ts';
import {
  CHECKOUT_REFS,
  COLL,
  LISTINGS,
  type CheckoutRefRow,
  type ListingRow,
  type PlanRow,
  type PriceRow,
  type ProductRow,
  type StoreRow,
  type ReferenceCheck,
} from './model.ts';
import { retrying } from './tx.ts';

const PUBLISHED = { status: 'published' };

/**
 * What a product is shown with, read in the same read as the products (lookup `products` is their index
 * among the lookups; absent, the found documents): its published store, plans and their prices.
 */
function nestedOf(products?: number): Lookup[] {
  const plans = products === undefined ? 1 : products + 2;
  return [
    { coll: COLL.store, field: 'id', to: 'store_id', from: products, filter: PUBLISHED },
    { coll: COLL.plan, field: 'product_lineage_id', to: 'lineage_id', from: products, filter: PUBLISHED },
    { coll: COLL.price, field: 'plan_lineage_id', to: 'lineage_id', from: plans, filter: PUBLISHED },
  ];
}

/** how long a checkout intent can be turned into a payment session */
export const CHECKOUT_TTL_MS = 30 * 60_000;
/** snapshots stay readable this long after expiry (a late session is told "expired", not "unknown") */
const REF_RETENTION_MS = 7 * 24 * 3600_000;
/** checkout intents per client (hashed IP) and minute: they write, without credentials */
const INTENTS_PER_MINUTE = 300;

export class CatalogBuyer {
  private rt: Runtime;

  constructor(rt: Runtime) {
    this.rt = rt;
  }

  private get store() {
    return this.rt.store;
  }

  // -------------------------------------------------------------------------------------------------
  // discovery

  async products(rawQuery: unknown) {
    const query = validate('CatalogDiscoveryQuery', rawQuery ?? {}, 'query');
    const limit = parseLimit(query.limit);
    if (typeof limit === 'string') throw invalidLimit(limit);
    const filter: Filter = {};
    if (query.merchant_id !== undefined) filter.merchant_id = query.merchant_id;
    if (query.sandbox !== undefined) filter.sandbox = query.sandbox === 'true';
    if (query.cursor !== undefined) {
      const after = decodeCursor(query.cursor);
      if (!after) throw invalidCursor();
      filter.id = { $lt: after };
    }
    const q = query.q?.trim();
    // the text index works on trigrams: a shorter term scans, which is bounded only within one merchant
    if (q && [...q].length < 3 && query.merchant_id === undefined) {
      throw badRequest("q needs at least 3 characters, or a merchant_id to search one merchant's catalog", {
        field: 'q',
        remediation: "Send q of at least 3 characters, or add merchant_id to search one merchant's catalog.",
      });
    }
    // the page of listings with its products, their stores, plans and prices: one read
    const { docs: listings, related } = await this.store.findWith<ListingRow>(
      LISTINGS,
      filter,
      { desc: true, limit: limit + 1, ...(q ? { text: { q, fields: ['search'] } } : {}) },
      [{ coll: COLL.product, field: 'id', to: 'id', filter: PUBLISHED }, ...nestedOf(0)],
    );
    const page = listings.slice(0, limit);
    const more = listings.length > limit;
    const [products, stores, plans, prices] = related as [ProductRow[], StoreRow[], PlanRow[], PriceRow[]];
    return {
      data: this.nest(
        page.map((l) => l.id),
        products,
        stores,
        plans,
        prices,
      ),
      has_more: more,
      next_cursor: more ? encodeCursor(page[page.length - 1].id) : null,
    };
  }

  async product(id: string) {
    const found =
      typeof id === 'string' && id.length <= 64
        ? await this.store.findWith<ProductRow>(COLL.product, { id, status: 'published' }, { limit: 1 }, nestedOf())
        : null;
    const [stores, plans, prices] = (found?.related ?? []) as [StoreRow[], PlanRow[], PriceRow[]];
    const [nested] = found ? this.nest([id], found.docs, stores, plans, prices) : [];
    if (!nested) throw notFound(`product ${String(id).slice(0, 64)}`);
    return nested;
  }

  /**
   * Published products with their store, published plans and published prices, in the order of `ids`,
   * from the rows read with them (nestedOf). A product whose store is not published is left out (the
   * listings already exclude it; this also covers a listing read in the middle of a store's transition).
   */
  private nest(ids: string[], products: ProductRow[], storeRows: StoreRow[], planRows: PlanRow[], prices: PriceRow[]) {
    const stores = new Map(storeRows.map((s) => [s.id, s]));
    const visible = products.filter((p) => p.status === 'published' && stores.has(p.store_id));
    const lines = new Set(visible.map((p) => p.lineage_id));
    const plans = planRows.filter((p) => lines.has(p.product_lineage_id));
    const byId = new Map(visible.map((p) => [p.id, p]));
    return ids
      .filter((id) => byId.has(id))
      .map((id) => {
        const p = byId.get(id)!;
        const s = stores.get(p.store_id)!;
        return {
          id: p.id,
          store_id: p.store_id,
          merchant_id: p.merchant_id,
          sandbox: p.sandbox,
          name: p.name,
          slug: p.slug,
          description: p.description,
          fulfillment_type: p.fulfillment_type,
          status: p.status,
          version: p.version_no,
          supersedes_product_id: p.supersedes_id,
          store: { id: s.id, name: s.name, slug: s.slug, description: s.description },
          plans: plans
            .filter((pl) => pl.product_lineage_id === p.lineage_id)
            .map((pl) => ({
              id: pl.id,
              product_id: p.id,
              name: pl.name,
              slug: pl.slug,
              entitlement: pl.entitlement,
              status: pl.status,
              version: pl.version_no,
              supersedes_plan_id: pl.supersedes_id,
              prices: prices
                .filter((pr) => pr.plan_lineage_id === pl.lineage_id)
                .map((pr) => ({
                  id: pr.id,
                  plan_id: pl.id,
                  amount_subunits: pr.amount_subunits,
                  currency_or_token: pr.currency_or_token,
                  decimals: pr.decimals,
                  allowed_payment_methods: pr.allowed_payment_methods,
                  status: pr.status,
                  version: pr.version_no,
                  supersedes_price_id: pr.supersedes_id,
                })),
            })),
        };
      });
  }

  // -------------------------------------------------------------------------------------------------
  // checkout intents

  async checkoutIntent(priceId: string, rawBody: unknown, clientHash: string) {
    validate('CatalogEmptyBody', rawBody ?? {});
    await limitInStore(this.store, 'checkout_intent', clientHash, INTENTS_PER_MINUTE, this.rt.now());
    return retrying(async () => {
      const price = typeof priceId === 'string' && priceId.length <= 64 ? await this.store.get<PriceRow>(COLL.price, priceId) : null;
      if (!price) throw notFound(`price ${String(priceId).slice(0, 64)}`);
      if (price.status !== 'published')
        throw conflict(`price ${price.id} is ${price.status}; only a published price can be checked out`, {
          field: 'price_id',
          remediation: 'Use a published price: GET /v1/catalog/products lists them.',
        });
      // the current published versions of its plan and product, and its store: all must be published
      const plan = await this.store.findOne<PlanRow>(COLL.plan, { lineage_id: price.plan_lineage_id, status: 'published' });
      if (!plan)
        throw conflict(`the plan of price ${price.id} (${price.plan_id}) is not published; the merchant must publish it`, {
          remediation: 'The merchant must publish the plan (POST /v1/plans/{plan_id}/publish) before this price can be checked out.',
        });
      const product = await this.store.findOne<ProductRow>(COLL.product, { lineage_id: price.product_lineage_id, status: 'published' });
      if (!product)
        throw conflict(`the product of price ${price.id} is not published; the merchant must publish it`, {
          remediation:
            'The merchant must publish the product (POST /v1/products/{product_id}/publish) before this price can be checked out.',
        });
      const store = await this.store.get<StoreRow>(COLL.store, product.store_id);
      if (!store || store.status !== 'published')
        throw conflict(`the store of price ${price.id} (${product.store_id}) is not published; the merchant must publish it`, {
          remediation: 'The merchant must publish the store (POST /v1/stores/{store_id}/publish) before this price can be checked out.',
        });
      const offered = checkoutMethods(price, this.rt.config.rails, product.sandbox);
      if (offered.length === 0) {
        const wanted = price.allowed_payment_methods ? price.allowed_payment_methods.join(', ') : `any ${price.currency_or_token} rail`;
        throw conflict(
          `price ${price.id} cannot be paid now: none of its payment methods (${wanted}) is an enabled rail${product.sandbox ? ' on testnet, and a sandbox merchant is paid on testnet only' : ' on mainnet, and a live merchant is paid on mainnet only'}`,
          {
            remediation:
              'The merchant must offer the price on an enabled rail of its network (a new price version with allowed_payment_methods from GET /v1/payment_methods).',
          },
        );
      }
      // the merchant's rail policy narrows what the price offers; nothing left: no payable checkout
      const policy = (await this.store.get<Doc & { rail_policy?: RailPolicy | null }>('merchants', price.merchant_id))?.rail_policy;
      const methods = allowedKeys(policy, offered);
      if (methods.length === 0) throw railPolicyRefusal(offered, policy!);
      const now = this.rt.now();
      const ref: CheckoutRefRow = {
        id: newId('cref'),
        merchant_id: price.merchant_id,
        sandbox: product.sandbox,
        store_id: store.id,
        product_id: product.id,
        plan_id: plan.id,
        price_id: price.id,
        amount_subunits: price.amount_subunits,
        currency_or_token: price.currency_or_token,
        decimals: price.decimals,
        allowed_payment_methods: methods,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + CHECKOUT_TTL_MS).toISOString(),
        purge_at: new Date(now.getTime() + CHECKOUT_TTL_MS + REF_RETENTION_MS).toISOString(),
      };
      const ops: WriteOp[] = [{ op: 'insert', coll: CHECKOUT_REFS, doc: ref }];
      // referenced rows are immutable from now on: a PATCH makes a new version
      for (const [coll, row] of [
        [COLL.price, price],
        [COLL.plan, plan],
        [COLL.product, product],
      ] as const) {
        if (!row.checkout_referenced) ops.push({ op: 'cas', coll, doc: { ...row, checkout_referenced: true }, expected: row.version! });
      }
      await this.store.write(ops);
      // An archive racing this intent (another request, another node) may have committed between the reads
      // above and the write. Statuses only move forward (published → archived), so rows still published
      // now were published when the snapshot was taken; otherwise the snapshot is withdrawn.
      const rows = await Promise.all([
        this.store.get<PriceRow>(COLL.price, price.id),
        this.store.get<PlanRow>(COLL.plan, plan.id),
        this.store.get<ProductRow>(COLL.product, product.id),
        this.store.get<StoreRow>(COLL.store, store.id),
      ]);
      const gone = rows.find((r) => !r || r.status !== 'published');
      if (gone !== undefined) {
        await this.store.write([{ op: 'delete', coll: CHECKOUT_REFS, id: ref.id }]);
        throw conflict(
          `${gone ? gone.id : 'a row of this price'} was archived while the checkout intent was made; it is no longer offered`,
          { remediation: 'Choose a price that is still offered: GET /v1/catalog/products lists them.' },
        );
      }
      return {
        checkout_reference_id: ref.id,
        price_id: ref.price_id,
        plan_id: ref.plan_id,
        product_id: ref.product_id,
        store_id: ref.store_id,
        merchant_id: ref.merchant_id,
        amount_subunits: ref.amount_subunits,
        currency_or_token: ref.currency_or_token,
        decimals: ref.decimals,
        allowed_payment_methods: ref.allowed_payment_methods,
        expires_at: ref.expires_at,
      };
    });
  }

  /** For the sessions area: a session created with metadata.checkout_reference_id must match its snapshot. */
  async checkReference(p: ReferenceCheck) {
    for (const f of ['merchant_id', 'checkout_reference_id', 'chain', 'network', 'token'] as const) {
      if (typeof p?.[f] !== 'string' || p[f].length === 0 || p[f].length > 64)
        throw badRequest(`${f} must be a non-empty string`, { field: f });
    }
    const digits = typeof p.amount_subunits === 'string' && /^\d{1,80}$/.test(p.amount_subunits);
    if (p.price === undefined ? !digits : p.amount_subunits !== undefined)
      throw badRequest('amount_subunits must be a string of digits, or price given instead (not both)', { field: 'amount_subunits' });
    if (p.price !== undefined && (typeof p.price?.currency !== 'string' || !/^\d{1,40}$/.test(String(p.price.amount_minor))))
      throw badRequest('price must be {currency, amount_minor (digits)}', { field: 'price' });
    const id = p.checkout_reference_id;
    const again = 'resolve the price again with POST /v1/catalog/prices/{price_id}/checkout-intent';
    const AGAIN = 'Resolve the price again with POST /v1/catalog/prices/{price_id}/checkout-intent and use the new checkout_reference_id.';
    const ref = await this.store.get<CheckoutRefRow>(CHECKOUT_REFS, id);
    if (!ref)
      throw badRequest(`metadata.checkout_reference_id ${id} is unknown; ${again}`, {
        field: 'metadata.checkout_reference_id',
        remediation: AGAIN,
      });
    if (ref.merchant_id !== p.merchant_id)
      throw badRequest(
        `metadata.checkout_reference_id ${id} belongs to another merchant; use a checkout intent of one of your own prices`,
        { field: 'metadata.checkout_reference_id', remediation: AGAIN },
      );
    if (ref.expires_at <= this.rt.now().toISOString())
      throw badRequest(`metadata.checkout_reference_id ${id} expired at ${ref.expires_at}; ${again}`, {
        field: 'metadata.checkout_reference_id',
        remediation: AGAIN,
      });
    if (isFiatCurrency(ref.currency_or_token)) {
      // priced in fiat: the session converts the same price at a fresh rate (its tokens follow from the quote)
      const amount = formatFiat({ currency: ref.currency_or_token, minor: BigInt(ref.amount_subunits), digits: ref.decimals });
      if (p.price?.currency !== ref.currency_or_token || !sameAmount(p.price.amount_minor, ref.amount_subunits))
        throw badRequest(
          `checkout reference ${id} is priced at ${amount} ${ref.currency_or_token}: create the session with price {amount: "${amount}", currency: "${ref.currency_or_token}"}`,
          { field: 'price' },
        );
    } else if (p.price !== undefined) {
      throw badRequest(
        `checkout reference ${id} is priced in ${ref.currency_or_token}; send amount_subunits ${ref.amount_subunits}, not price`,
        {
          field: 'price',
        },
      );
    } else if (!sameAmount(p.amount_subunits!, ref.amount_subunits)) {
      throw badRequest(
        `the amount does not match checkout reference ${id}: the price is ${fromSubunits(ref.amount_subunits, ref.decimals)} ${ref.currency_or_token} (${ref.amount_subunits} smallest units)`,
        { field: 'amount', remediation: `Send amount_subunits ${ref.amount_subunits} (the price of the checkout reference).` },
      );
    }
    const rail = `${p.chain}:${p.network}:${p.token}`;
    if (!ref.allowed_payment_methods.includes(rail)) {
      throw badRequest(
        `${rail} is not a payment method of checkout reference ${id}; use one of ${ref.allowed_payment_methods.join(', ')}`,
        { field: 'paymentMethod', remediation: `Send paymentMethod as one of ${ref.allowed_payment_methods.join(', ')}.` },
      );
    }
    if (!findRail(this.rt.config.rails, p.chain, p.network, p.token))
      throw badRequest(`${rail} is no longer an enabled rail; ${again}`, { field: 'paymentMethod', remediation: AGAIN });
    return {
      ok: true as const,
      checkout_reference_id: ref.id,
      price_id: ref.price_id,
      plan_id: ref.plan_id,
      product_id: ref.product_id,
      store_id: ref.store_id,
      amount_subunits: ref.amount_subunits,
      currency_or_token: ref.currency_or_token,
    };
  }
}
