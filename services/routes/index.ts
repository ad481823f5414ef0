/** Every REST route; one file per area. */
import type { RouteDef } from './types.ts';
import { DISCOVERY_ROUTES } from './discovery.ts';
import { MERCHANT_ROUTES } from './merchants.ts';
import { SESSIONS_ROUTES } from './sessions.ts';
import { CATALOG_ROUTES } from './catalog.ts';
import { WEBHOOKS_ROUTES } from './webhooks.ts';
import { CHECKOUT_ROUTES } from './checkout.ts';
import { EVENTS_ROUTES } from './events.ts';

export const ROUTES: RouteDef[] = [...DISCOVERY_ROUTES, ...MERCHANT_ROUTES, ...SESSIONS_ROUTES, ...CATALOG_ROUTES, ...WEBHOOKS_ROUTES, ...CHECKOUT_ROUTES, ...EVENTS_ROUTES];
