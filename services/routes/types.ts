/** A REST route of the /v1 API: which action serves it and what credentials it takes. */
export type AuthMode =
  /** no credentials */
  | 'none'
  /** X-API-Key required */
  | 'key'
  /** X-API-Key optional; when sent it must be valid */
  | 'optional'
  /** X-API-Key or a bearer token */
  | 'key-or-bearer'
  /** a bearer token is optional; when sent it must be valid (merchant registration) */
  | 'bearer-optional';

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  action: string;
  auth: AuthMode;
}

/** The authenticated caller; one request-meta type for every service lives in lib/core/request-meta.ts. */
export type { Caller } from '../../lib/core/request-meta.ts';
