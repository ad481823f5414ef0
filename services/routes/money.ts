/** REST routes of wallets and payouts (issue 9). */
import type { RouteDef } from './types.ts';

export const MONEY_ROUTES: RouteDef[] = [
  { method: 'POST', path: '/v1/wallets', action: 'wallets.create', auth: 'key' },
  { method: 'GET', path: '/v1/wallets', action: 'wallets.list', auth: 'key' },
  { method: 'GET', path: '/v1/wallets/:wallet_id', action: 'wallets.get', auth: 'key' },
  { method: 'GET', path: '/v1/wallets/:wallet_id/transactions', action: 'wallets.transactions', auth: 'key' },
  { method: 'POST', path: '/v1/payouts', action: 'payouts.create', auth: 'key' },
  { method: 'GET', path: '/v1/payouts', action: 'payouts.list', auth: 'key' },
  { method: 'GET', path: '/v1/payouts/:payout_id', action: 'payouts.get', auth: 'key' },
];
