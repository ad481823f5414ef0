/** Spot rates (public). */
import type { RouteDef } from './types.ts';

export const RATES_ROUTES: RouteDef[] = [{ method: 'GET', path: '/v1/rates', action: 'rates.list', auth: 'none' }];
