/** REST routes of the sessions area. */
import type { RouteDef } from './types.ts';

export const SESSIONS_ROUTES: RouteDef[] = [];
