/** Every REST route; one file per area. */
import type { RouteDef } from './types.ts';
import { DISCOVERY_ROUTES } from './discovery.ts';
import { MERCHANT_ROUTES } from './merchants.ts';
import { SESSIONS_ROUTES } from './sessions.ts';
import { CATALOG_ROUTES } from './catalog.ts';
import { WEBHOOKS_ROUTES } from './webhooks.ts';
import { CHECKOUT_ROUTES } from './checkout.ts';
import { RECEIPTS_ROUTES } from './receipts.ts';
import { MONEY_ROUTES } from './money.ts';
import { RATES_ROUTES } from './rates.ts';
import { OPS_ROUTES } from './ops.ts';
import { FAUCETS_ROUTES } from './faucets.ts';
import { AGENTS_ROUTES } from './agents.ts';
import { EVENTS_ROUTES } from './events.ts';

export const ROUTES: RouteDef[] = [
  ...DISCOVERY_ROUTES,
  ...MERCHANT_ROUTES,
  ...SESSIONS_ROUTES,
  ...CATALOG_ROUTES,
  ...WEBHOOKS_ROUTES,
  ...CHECKOUT_ROUTES,
  ...RECEIPTS_ROUTES,
  ...RATES_ROUTES,
  ...MONEY_ROUTES,
  ...FAUCETS_ROUTES,
  ...OPS_ROUTES,
  ...AGENTS_ROUTES,
  ...EVENTS_ROUTES,
];
