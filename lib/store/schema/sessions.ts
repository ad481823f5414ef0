/** Collections of the sessions area. */
import type { CollectionSpec } from '../port.ts';

export const SESSIONS_COLLECTIONS: CollectionSpec[] = [];
