/** PDF receipts: the merchant's (X-API-Key; demo sessions without) and the buyer's behind the checkout link. */
import type { RouteDef } from './types.ts';

export const RECEIPTS_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/v1/payment_sessions/:session_id/receipt', action: 'receipts.merchant', auth: 'optional' },
  { method: 'GET', path: '/checkout/:session_id/receipt', action: 'receipts.buyer', auth: 'none' },
];
