/** The hosted checkout page behind payment_url (public: the unguessable session id is the capability). */
import type { RouteDef } from './types.ts';

export const CHECKOUT_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/checkout/:session_id', action: 'checkout.page', auth: 'none' },
  { method: 'GET', path: '/checkout/:session_id/status', action: 'checkout.status', auth: 'none' },
];
