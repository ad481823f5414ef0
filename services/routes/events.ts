/** REST routes of the merchant events API. */
import type { RouteDef } from './types.ts';

export const EVENTS_ROUTES: RouteDef[] = [
  { method: 'GET', path: '/v1/events', action: 'events.list', auth: 'key' },
  { method: 'GET', path: '/v1/events/stream', action: 'events.stream', auth: 'key' },
  { method: 'GET', path: '/v1/events/:event_id', action: 'events.get', auth: 'key' },
];
