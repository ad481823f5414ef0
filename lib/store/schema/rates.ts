/** Collections of spot rates. */
import type { CollectionSpec } from '../port.ts';

export const RATES_COLLECTIONS: CollectionSpec[] = [
  /**
   * id = `BASE:QUOTE`: the last rate fetched from a source {rate, source, as_of, fetched_at}, shared by every
   * node (RATES_CACHE_TTL), and what a completing session records without any network call.
   */
  { name: 'rates_cache' },
];
