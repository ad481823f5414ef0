/** Collections of the catalog area. */
import type { CollectionSpec } from '../port.ts';

export const CATALOG_COLLECTIONS: CollectionSpec[] = [];
