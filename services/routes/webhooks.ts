/** REST routes of webhook delivery. */
import type { RouteDef } from './types.ts';

export const WEBHOOKS_ROUTES: RouteDef[] = [];
