/**
 * Catalog prices bought with x402, for agents that find them without reading our docs:
 * - every published price (of a published plan, product and store) that an x402 client can pay is a paid
 *   resource of this service, `GET /v1/catalog/prices/{price_id}/x402` (no credentials): 402 with one
 *   `accepts[]` entry per rail it can be paid on (a challenge of the merchant each), then, paid, the
 *   purchase (what was bought, the settlement) — the merchant learns of it by its `x402.settled` event;
 * - the list of them in the x402 bazaar's discovery shape (`@x402/extensions/bazaar`
 *   DiscoveryResourcesResponse), at `GET /v1/x402/facilitator/discovery/resources`, where a bazaar client
 *   pointed at this facilitator looks.
 * The rails a price can be paid on: those standard clients pay (USDC with a configured token), on the
 * merchant's own network (the environment gate), allowed by its rail policy and the price's methods.
 */
import type { Doc, Store } from '../store/port.ts';
import { networkGate } from '../core/environment.ts';
import { allowedKeys, type RailPolicy } from '../merchants/rail-policy.ts';
import { railKey, type Rail } from '../../config/rails.ts';
import { isFiatCurrency } from '../rates/quote.ts';
import { COLL, type PlanRow, type PriceRow, type ProductRow, type StoreRow } from '../catalog/model.ts';
import { railFacts } from './facilitator.ts';
import { amountOf, type IssueDeps } from './issue.ts';
import type { RedeemResult } from './model.ts';
import { requirementsOf, X402_V2, type PaymentRequirements } from './wire.ts';

export const purchasePath = (priceId: string) => `/v1/catalog/prices/${priceId}/x402`;

export interface PayablePrice {
  price: PriceRow;
  plan: PlanRow;
  product: ProductRow;
  store: StoreRow;
  merchant: { id: string; sandbox: boolean; kyc_status?: string; rail_policy?: RailPolicy | null };
}

/** A published price with its current published plan, product and store, and its merchant; else null. */
export async function publishedPrice(store: Store, priceId: string): Promise<PayablePrice | null> {
  const price = typeof priceId === 'string' && priceId.length <= 64 ? await store.get<PriceRow>(COLL.price, priceId) : null;
  if (!price || price.status !== 'published') return null;
  const plan = await store.findOne<PlanRow>(COLL.plan, { lineage_id: price.plan_lineage_id, status: 'published' });
  const product = await store.findOne<ProductRow>(COLL.product, { lineage_id: price.product_lineage_id, status: 'published' });
  const shop = product ? await store.get<StoreRow>(COLL.store, product.store_id) : null;
  const merchant = await store.get<Doc & { sandbox: boolean; kyc_status?: string; rail_policy?: RailPolicy | null }>(
    'merchants',
    price.merchant_id,
  );
  if (!plan || !product || !shop || shop.status !== 'published' || !merchant) return null;
  return {
    price,
    plan,
    product,
    store: shop,
    merchant: { id: merchant.id, sandbox: merchant.sandbox, kyc_status: merchant.kyc_status, rail_policy: merchant.rail_policy ?? null },
  };
}

/** The rails an x402 client can pay the price on. */
export function priceRails(d: IssueDeps, p: PayablePrice): Rail[] {
  const { price, merchant } = p;
  return d.env.rails.filter(
    (r) =>
      r.token === 'USDC' &&
      d.env.tokenOf(r) !== null &&
      d.env.rpcUrl(r.chain, r.network) !== null &&
      !networkGate(merchant, r.network, 'x402 payments') &&
      allowedKeys(merchant.rail_policy, [railKey(r)]).length === 1 &&
      (isFiatCurrency(price.currency_or_token) || price.currency_or_token === r.token) &&
      (!price.allowed_payment_methods || price.allowed_payment_methods.includes(railKey(r))),
  );
}

export const describe = (p: PayablePrice) => `${p.product.name} — ${p.plan.name}`.slice(0, 500);

/** What a paid purchase answers: what was bought and how it was paid. */
export function purchaseOf(p: PayablePrice, r: RedeemResult) {
  return {
    status: 'paid',
    price_id: p.price.id,
    plan_id: p.plan.id,
    product_id: p.product.id,
    store_id: p.store.id,
    merchant_id: p.merchant.id,
    entitlement: p.plan.entitlement,
    challenge_id: r.challenge_id,
    amount_subunits: r.amount_subunits,
    payer: r.payer,
    transaction: r.settle_response.transaction,
    network: r.settle_response.network,
    settled_at: r.settled_at,
  };
}

/** One bazaar item: the purchase resource and what paying it takes now on each rail (no challenge yet). */
async function itemOf(d: IssueDeps, publicUrl: string, p: PayablePrice): Promise<Record<string, unknown> | null> {
  const accepts: PaymentRequirements[] = [];
  for (const rail of priceRails(d, p)) {
    const facts = await railFacts(d.env, rail).catch(() => null);
    const amount = facts ? await amountOf(d, { price_id: p.price.id }, p.merchant.id, rail).catch(() => null) : null;
    if (!facts || !amount || BigInt(amount.amount) < d.env.minimum(rail)) continue;
    const wallet = await d.wallets.defaultWallet(p.merchant.id, rail.chain, rail.network);
    const r = requirementsOf(
      {
        challenge_id: '',
        amount_subunits: amount.amount,
        asset: d.env.tokenOf(rail)!,
        pay_to: wallet.address,
        expires_at: new Date(d.env.now().getTime() + 300_000).toISOString(),
      },
      facts,
      d.env.now(),
    );
    // no challenge exists until the resource is asked for: the 402 names it
    const { challengeId: _none, memo: _memo, ...extra } = r.extra;
    accepts.push({ ...r, extra });
  }
  if (accepts.length === 0) return null;
  const serviceName = p.store.name
    .replace(/[^\x20-\x7e]/g, '')
    .slice(0, 32)
    .trim();
  return {
    resource: `${publicUrl}${purchasePath(p.price.id)}`,
    type: 'http',
    x402Version: X402_V2,
    accepts,
    lastUpdated: p.price.published_at ?? p.price.updated_at,
    description: describe(p),
    mimeType: 'application/json',
    ...(serviceName ? { serviceName } : {}),
  };
}

const SCAN_LIMIT = 1000;

/**
 * GET …/discovery/resources: the payable published prices, newest first, in the bazaar's shape, filtered
 * as its client asks (type, payTo, network, scheme; limit 1–100, offset). Bounded: the newest
 * 1,000 published prices are looked at.
 */
export async function discoveryResources(
  d: IssueDeps,
  publicUrl: string,
  q: { type?: string; payTo?: string; network?: string; scheme?: string; limit?: string; offset?: string },
) {
  const limit = Math.min(100, Math.max(1, Number.parseInt(q.limit ?? '20', 10) || 20));
  const offset = Math.max(0, Number.parseInt(q.offset ?? '0', 10) || 0);
  const items: Array<Record<string, unknown> & { accepts: PaymentRequirements[] }> = [];
  if (q.type === undefined || q.type === 'http') {
    const prices = await d.env.store.find<PriceRow>(COLL.price, { status: 'published' }, { sort: 'id', desc: true, limit: SCAN_LIMIT });
    for (const row of prices) {
      const p = await publishedPrice(d.env.store, row.id);
      const item = p ? await itemOf(d, publicUrl, p) : null;
      if (!item) continue;
      const accepts = (item.accepts as PaymentRequirements[]).filter(
        (a) =>
          (!q.network || a.network === q.network) &&
          (!q.scheme || a.scheme === q.scheme) &&
          (!q.payTo || a.payTo.toLowerCase() === q.payTo.toLowerCase()),
      );
      if (accepts.length) items.push({ ...item, accepts });
    }
  }
  return { x402Version: X402_V2, items: items.slice(offset, offset + limit), pagination: { limit, offset, total: items.length } };
}
