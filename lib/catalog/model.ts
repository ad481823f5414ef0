/** Stored rows of the catalog and how the API shows them. */
import type { Doc } from '../store/port.ts';
import type { Kind, Status } from './rules.ts';
import type { IdPrefix } from '../core/ids.ts';

interface Base extends Doc {
  merchant_id: string;
  sandbox: boolean;
  status: Status;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  archived_at: string | null;
}

export interface StoreRow extends Base {
  name: string;
  slug: string | null;
  description: string | null;
}

interface Versioned extends Base {
  lineage_id: string;
  version_no: number;
  supersedes_id: string | null;
  checkout_referenced: boolean;
}

export interface ProductRow extends Versioned {
  store_id: string;
  name: string;
  slug: string | null;
  description: string | null;
  fulfillment_type: 'one_time' | 'subscription' | 'metered' | 'service';
}

export interface PlanRow extends Versioned {
  store_id: string;
  product_id: string;
  product_lineage_id: string;
  name: string;
  slug: string | null;
  entitlement: Record<string, unknown> | null;
}

export interface PriceRow extends Versioned {
  store_id: string;
  plan_id: string;
  plan_lineage_id: string;
  product_lineage_id: string;
  amount_subunits: string;
  currency_or_token: string;
  allowed_payment_methods: string[] | null;
  decimals: number;
}

export type AnyRow = StoreRow | ProductRow | PlanRow | PriceRow;

export interface ListingRow extends Doc {
  merchant_id: string;
  sandbox: boolean;
  store_id: string;
  search: string;
}

export interface CheckoutRefRow extends Doc {
  merchant_id: string;
  sandbox: boolean;
  store_id: string;
  product_id: string;
  plan_id: string;
  price_id: string;
  amount_subunits: string;
  currency_or_token: string;
  decimals: number;
  allowed_payment_methods: string[];
  created_at: string;
  expires_at: string;
  purge_at: string;
}

export const COLL: Record<Kind, string> = {
  store: 'catalog_stores',
  product: 'catalog_products',
  plan: 'catalog_plans',
  price: 'catalog_prices',
};
export const LISTINGS = 'catalog_listings';
export const CHECKOUT_REFS = 'catalog_checkout_refs';

export const ID_PREFIX: Record<Kind, IdPrefix> = { store: 'store', product: 'prod', plan: 'plan', price: 'price' };
export const PATH: Record<Kind, string> = { store: '/v1/stores', product: '/v1/products', plan: '/v1/plans', price: '/v1/prices' };

export function presentStore(r: StoreRow) {
  return {
    id: r.id,
    merchant_id: r.merchant_id,
    name: r.name,
    slug: r.slug,
    description: r.description,
    status: r.status,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentProduct(r: ProductRow) {
  return {
    id: r.id,
    store_id: r.store_id,
    merchant_id: r.merchant_id,
    sandbox: r.sandbox,
    name: r.name,
    slug: r.slug,
    description: r.description,
    fulfillment_type: r.fulfillment_type,
    status: r.status,
    version: r.version_no,
    supersedes_product_id: r.supersedes_id,
    checkout_referenced: r.checkout_referenced,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentPlan(r: PlanRow) {
  return {
    id: r.id,
    product_id: r.product_id,
    name: r.name,
    slug: r.slug,
    entitlement: r.entitlement,
    status: r.status,
    version: r.version_no,
    supersedes_plan_id: r.supersedes_id,
    checkout_referenced: r.checkout_referenced,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function presentPrice(r: PriceRow) {
  return {
    id: r.id,
    plan_id: r.plan_id,
    amount_subunits: r.amount_subunits,
    currency_or_token: r.currency_or_token,
    decimals: r.decimals,
    allowed_payment_methods: r.allowed_payment_methods,
    status: r.status,
    version: r.version_no,
    supersedes_price_id: r.supersedes_id,
    checkout_referenced: r.checkout_referenced,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function present(kind: Kind, row: AnyRow): Record<string, unknown> {
  switch (kind) {
    case 'store':
      return presentStore(row as StoreRow);
    case 'product':
      return presentProduct(row as ProductRow);
    case 'plan':
      return presentPlan(row as PlanRow);
    case 'price':
      return presentPrice(row as PriceRow);
  }
}

/**
 * What a session created with metadata.checkout_reference_id asks the catalog to confirm (the
 * catalog.checkCheckoutReference action): the session's merchant, rail and either its amount in tokens or
 * its price in fiat, which must match the reference's snapshot.
 */
export type ReferenceCheck = {
  merchant_id: string;
  checkout_reference_id: string;
  chain: string;
  network: string;
  token: string;
} & (
  | { amount_subunits: string; price?: undefined }
  /** a session priced in fiat: its price in the currency's minor units (a fiat catalog price is matched on it) */
  | { price: { currency: string; amount_minor: string }; amount_subunits?: undefined }
);
