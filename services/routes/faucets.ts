/** Testnet faucets: the public list, and the local drip (sandbox X-API-Key). */
import type { RouteDef } from './types.ts';

export const FAUCETS_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/v1/sandbox/faucets', action: 'faucets.list', auth: 'none' },
  { method: 'POST', path: '/v1/sandbox/faucets/drip', action: 'faucets.drip', auth: 'key' },
];
