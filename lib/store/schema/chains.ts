/** Collections of the chains area. */
import type { CollectionSpec } from '../port.ts';

export const CHAINS_COLLECTIONS: CollectionSpec[] = [];
