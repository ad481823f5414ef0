/** REST routes of the sessions area. */
import type { RouteDef } from './types.ts';

export const SESSIONS_ROUTES: RouteDef[] = [
  { method: 'POST', path: '/v1/payment_sessions', action: 'sessions.create', auth: 'key' },
  { method: 'GET', path: '/v1/payment_sessions', action: 'sessions.list', auth: 'key' },
  { method: 'POST', path: '/v1/payment_sessions/demo', action: 'sessions.createDemo', auth: 'none' },
  { method: 'GET', path: '/v1/payment_sessions/:session_id', action: 'sessions.get', auth: 'optional' },
  { method: 'POST', path: '/v1/payment_sessions/:session_id/simulate', action: 'sessions.simulate', auth: 'optional' },
  { method: 'POST', path: '/v1/payment_sessions/:session_id/refunds', action: 'refunds.create', auth: 'key' },
  { method: 'GET', path: '/v1/payment_sessions/:session_id/refunds', action: 'refunds.list', auth: 'key' },
  { method: 'GET', path: '/v1/payment_sessions/:session_id/refunds/:refund_id', action: 'refunds.get', auth: 'key' },
];
