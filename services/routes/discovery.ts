/** Public discovery routes. */
import type { RouteDef } from './types.ts';

export const DISCOVERY_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/v1/payment_methods', action: 'discovery.paymentMethods', auth: 'none' },
];
