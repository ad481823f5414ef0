/**
 * What a facade action finds in ctx.meta, in one type for every service (the gateway,
 * services/api.service.ts, fills it): the authenticated caller, the hashed client, the few request
 * headers actions read, and the response fields moleculer-web honours.
 */
import type { Context } from 'moleculer';

/**
 * What the gateway read of an API key's merchant to authenticate it, handed on so that the request's
 * rules (KYC, rail policy) do not read the same row again.
 */
export interface CallerStanding {
  kyc_status?: string;
  rail_policy?: object | null;
}

/** The authenticated caller (set by the gateway's authenticate as ctx.meta.user). */
export type Caller =
  | { kind: 'merchant'; merchant_id: string; sandbox: boolean; key_id: string; standing?: CallerStanding }
  | { kind: 'bearer'; user_id: string; email: string }
  | null;

export interface RequestMeta {
  user?: Caller;
  /** hashed, never raw: per-client limits and alerts must not store IPs */
  client?: { ip_hash: string; user_agent_hash?: string; route?: string; credentials?: string[] };
  /** the request headers actions read (the gateway copies exactly these) */
  headers?: {
    'idempotency-key'?: string;
    'x-merchant-id'?: string;
    'if-none-match'?: string;
    'last-event-id'?: string;
    /** the hosted checkout answers a browser (text/html) with pages, anyone else with JSON */
    accept?: string;
    /** x402 proofs: v2, the spec's, v1 (a catalog price bought with x402) */
    'payment-signature'?: string;
    'x-service-payment'?: string;
    'x-payment'?: string;
  };
  $statusCode?: number;
  $location?: string;
  $responseType?: string;
  $responseHeaders?: Record<string, string>;
}

/** The context of a facade action: params P and the request meta. */
export type RequestContext<P = unknown> = Context<P, RequestMeta>;

/** ctx.meta as the request meta (for helpers that take any context). */
export const requestMeta = (ctx: Context): RequestMeta => ctx.meta as RequestMeta;

/** The merchant behind an API key, or null for anyone else. */
export function merchantCaller(ctx: Context): Extract<Caller, { kind: 'merchant' }> | null {
  const user = requestMeta(ctx).user;
  return user?.kind === 'merchant' ? user : null;
}

/** The hashed client address ('unknown' when the gateway did not set it: internal calls). */
export const clientHash = (ctx: Context): string => requestMeta(ctx).client?.ip_hash ?? 'unknown';
