/** Operations routes a merchant reads: session diagnostics and its own audit log. */
import type { RouteDef } from './types.ts';

export const OPS_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/v1/payment_sessions/:session_id/diagnostics', action: 'diagnostics.session', auth: 'key' },
  { method: 'GET', path: '/v1/audit-events', action: 'ops.auditEvents', auth: 'key' },
];
