/**
 * Collections of the catalog area.
 *
 * Rows of products, plans and prices are versions: `lineage_id` is the id of the first version of the
 * line, `version_no` its number (the API's `version`; the store's own `version` field is the
 * compare-and-set counter). Children point at the version they were created under (`product_id`,
 * `plan_id`) and at its line (`product_lineage_id`, `plan_lineage_id`), so a new version of a product
 * keeps its plans and a new version of a plan keeps its prices.
 *
 * `catalog_listings` is derived: one row per product a buyer can discover (published product in a
 * published store), with the lowercased name and description in `search`, kept in step in the same
 * atomic write as every transition that changes visibility. Discovery pages and searches read it alone.
 */
import type { CollectionSpec } from '../port.ts';

export const CATALOG_COLLECTIONS: CollectionSpec[] = [
  {
    name: 'catalog_stores',
    indexes: [{ fields: ['merchant_id', 'id'] }],
  },
  {
    name: 'catalog_products',
    indexes: [
      { fields: ['merchant_id', 'id'] },
      { fields: ['store_id', 'status'] },
      { fields: ['store_id', 'id'] },
      { fields: ['lineage_id', 'version_no'], unique: true },
    ],
  },
  {
    name: 'catalog_plans',
    indexes: [
      { fields: ['merchant_id', 'id'] },
      { fields: ['product_lineage_id', 'status'] },
      { fields: ['product_lineage_id', 'id'] },
      { fields: ['product_id'] },
      { fields: ['lineage_id', 'version_no'], unique: true },
    ],
  },
  {
    name: 'catalog_prices',
    indexes: [
      { fields: ['merchant_id', 'id'] },
      { fields: ['plan_lineage_id', 'status'] },
      { fields: ['plan_lineage_id', 'id'] },
      { fields: ['plan_id'] },
      { fields: ['lineage_id', 'version_no'], unique: true },
    ],
  },
  {
    name: 'catalog_listings',
    indexes: [{ fields: ['merchant_id', 'id'] }, { fields: ['sandbox', 'id'] }, { fields: ['store_id'] }],
    textIndex: ['search'],
  },
  /** checkout snapshots; kept a week past their expiry so that a late session gets "expired", not "unknown" */
  { name: 'catalog_checkout_refs', indexes: [{ fields: ['price_id'] }], expiresField: 'purge_at' },
];
