/** REST routes of the catalog area. */
import type { RouteDef } from './types.ts';

export const CATALOG_ROUTES: RouteDef[] = [];
