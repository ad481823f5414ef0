/** REST routes of webhook delivery. */
import type { RouteDef } from './types.ts';

export const WEBHOOKS_ROUTES: RouteDef[] = [
  { method: 'POST', path: '/v1/payment_sessions/:session_id/webhook/retry', action: 'webhooks.retry', auth: 'key' },
  { method: 'GET', path: '/v1/payment_sessions/:session_id/webhooks', action: 'webhooks.log', auth: 'key' },
];
