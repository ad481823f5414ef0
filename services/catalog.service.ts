/**
 * The catalog (facade): stores, products, plans and prices of the calling merchant (X-API-Key or a
 * bearer token), buyer discovery and checkout intents without credentials, and the checkout-reference
 * check the sessions area calls. The rules live in lib/catalog/.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { clientHash, requestMeta } from '../lib/core/request-meta.ts';
import { created } from './http-meta.ts';
import { CatalogMerchant, type Actor, type Result } from '../lib/catalog/merchant.ts';
import { CatalogBuyer } from '../lib/catalog/buyer.ts';
import type { ReferenceCheck } from '../lib/catalog/model.ts';
import type { Kind } from '../lib/catalog/rules.ts';

type Http = { body?: unknown; query?: unknown; params?: Record<string, string | undefined> };

const KINDS: Kind[] = ['store', 'product', 'plan', 'price'];
const CAP: Record<Kind, string> = { store: 'Store', product: 'Product', plan: 'Plan', price: 'Price' };

export function createCatalogService(rt: Runtime): ServiceSchema {
  const merchant = new CatalogMerchant(rt);
  const buyer = new CatalogBuyer(rt);

  const actorOf = (ctx: Context<Http>): Promise<Actor> => {
    const meta = requestMeta(ctx);
    return merchant.actor(meta.user, meta.headers?.['x-merchant-id']);
  };
  const reply = (ctx: Context, r: Result) => {
    if (r.created) created(ctx, r.created);
    return r.body;
  };

  const actions: Record<string, unknown> = {};
  for (const kind of KINDS) {
    const C = CAP[kind];
    const idOf = (ctx: Context<Http>) => ctx.params.params?.[`${kind}_id`] ?? '';
    actions[`create${C}`] = async (ctx: Context<Http>) =>
      reply(ctx, await merchant.create(kind, await actorOf(ctx), ctx.params.body, requestMeta(ctx).headers?.['idempotency-key']));
    actions[`list${C}s`] = async (ctx: Context<Http>) => reply(ctx, await merchant.list(kind, await actorOf(ctx), ctx.params.query));
    actions[`get${C}`] = async (ctx: Context<Http>) => reply(ctx, await merchant.get(kind, await actorOf(ctx), idOf(ctx)));
    actions[`update${C}`] = async (ctx: Context<Http>) =>
      reply(ctx, await merchant.update(kind, await actorOf(ctx), idOf(ctx), ctx.params.body));
    actions[`delete${C}`] = async (ctx: Context<Http>) => reply(ctx, await merchant.remove(kind, await actorOf(ctx), idOf(ctx)));
    actions[`publish${C}`] = async (ctx: Context<Http>) => {
      merchant.noBody(ctx.params.body);
      return reply(ctx, await merchant.publish(kind, await actorOf(ctx), idOf(ctx)));
    };
    actions[`archive${C}`] = async (ctx: Context<Http>) => {
      merchant.noBody(ctx.params.body);
      return reply(ctx, await merchant.archive(kind, await actorOf(ctx), idOf(ctx)));
    };
  }

  return {
    name: 'catalog',
    actions: {
      ...actions,
      discoverProducts: (ctx: Context<Http>) => buyer.products(ctx.params.query),
      discoverProduct: (ctx: Context<Http>) => buyer.product(ctx.params.params?.product_id ?? ''),
      /** 200: resolving a price; the snapshot it records is not an addressable resource */
      createCheckoutIntent: (ctx: Context<Http>) =>
        buyer.checkoutIntent(ctx.params.params?.price_id ?? '', ctx.params.body, clientHash(ctx)),
      /**
       * For the sessions area, when a session is created with metadata.checkout_reference_id: 400 with a
       * clear message unless the reference is the merchant's, unexpired, for this amount and this rail.
       */
      checkCheckoutReference: {
        visibility: 'public',
        handler: (ctx: Context<ReferenceCheck>) => buyer.checkReference(ctx.params),
      },
    },
  };
}
