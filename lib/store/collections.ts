/** Every collection of the service, one file per area under schema/. */
import type { CollectionSpec } from './port.ts';
import { MERCHANT_COLLECTIONS } from './schema/merchants.ts';
import { SESSIONS_COLLECTIONS } from './schema/sessions.ts';
import { CATALOG_COLLECTIONS } from './schema/catalog.ts';
import { CHAINS_COLLECTIONS } from './schema/chains.ts';
import { WEBHOOKS_COLLECTIONS } from './schema/webhooks.ts';
import { OPS_COLLECTIONS } from './schema/ops.ts';
import { LEDGER_COLLECTIONS } from './schema/ledger.ts';
import { RATES_COLLECTIONS } from './schema/rates.ts';
import { BROADCAST_COLLECTIONS } from './schema/broadcast.ts';
import { AGENTS_COLLECTIONS } from './schema/agents.ts';
import { REFUNDS_COLLECTIONS } from './schema/refunds.ts';
import { RECONCILE_COLLECTIONS } from './schema/reconcile.ts';

export const COLLECTIONS: CollectionSpec[] = [
  ...MERCHANT_COLLECTIONS,
  ...SESSIONS_COLLECTIONS,
  ...CATALOG_COLLECTIONS,
  ...CHAINS_COLLECTIONS,
  ...WEBHOOKS_COLLECTIONS,
  ...OPS_COLLECTIONS,
  ...LEDGER_COLLECTIONS,
  ...RATES_COLLECTIONS,
  ...BROADCAST_COLLECTIONS,
  ...AGENTS_COLLECTIONS,
  ...REFUNDS_COLLECTIONS,
  ...RECONCILE_COLLECTIONS,
];
