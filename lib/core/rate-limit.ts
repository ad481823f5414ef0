/**
 * Every rate limit of the service in one place: which subject it counts, its key in the store, and the
 * 429 message a client gets. All count requests in fixed one-minute windows.
 *
 * - `merchant`: requests per API key's merchant, up to its `rate_limit_per_minute`;
 * - `bearer`: requests per bearer user, up to RATE_LIMIT_PER_MINUTE;
 * - `public`, `demo`, `checkout_intent`: per client (hashed IP).
 * Every one is an atomic counter in the store per request (`limitInStore`): one count across every node
 * and process, kept across restarts, never batched (so nothing is over-admitted). On SQLite the counter
 * joins its turn's group commit, so it costs a savepoint, not a transaction.
 */
import { rateLimited } from './errors.ts';
import type { Store } from '../store/port.ts';

export const RATE_WINDOW_MS = 60_000;

export type RateScope = 'merchant' | 'bearer' | 'public' | 'demo' | 'checkout_intent';

interface RateLimitDef {
  /** the counter's key in the store for a subject */
  key(subject: string): string;
  message(limit: number): string;
  /** what to do about it (the envelope's remediation) */
  remediation: string;
}

export const RATE_LIMITS: Record<RateScope, RateLimitDef> = {
  merchant: {
    key: (merchantId) => `rate:${merchantId}`,
    message: (n) => `rate limit of ${n} requests per minute exceeded, retry later`,
    remediation: 'Retry after the current minute; your limit is rate_limit_per_minute in GET /v1/me (the operator can raise it).',
  },
  bearer: {
    key: (userId) => `rate:${userId}`,
    message: (n) => `rate limit of ${n} requests per minute exceeded, retry later`,
    remediation: 'Retry after the current minute; a bearer user gets RATE_LIMIT_PER_MINUTE requests a minute.',
  },
  /** subject: `<onboarding step>:<client hash>` */
  public: {
    key: (subject) => `public:${subject}`,
    message: () => 'too many requests from this client, retry later',
    remediation: 'Retry after the current minute (the PUBLIC_RATE_LIMIT_PER_MINUTE setting).',
  },
  demo: {
    key: (client) => `public:demo:${client}`,
    message: (n) => `too many demo sessions from this client (at most ${n} a minute); retry in a minute`,
    remediation: 'Retry after the current minute, or register a sandbox merchant for sessions without this limit.',
  },
  checkout_intent: {
    key: (client) => `catalog:intent:${client}`,
    message: () => 'too many checkout intents from this client, retry in a minute',
    remediation: 'Retry after the current minute.',
  },
};

/** The 429 of a scope. */
export function rateLimitError(scope: RateScope, limit: number) {
  return rateLimited(RATE_LIMITS[scope].message(limit), { remediation: RATE_LIMITS[scope].remediation });
}

/** Counts one request of `subject` in the store and throws the scope's 429 when it is over `limit`. */
export async function limitInStore(store: Store, scope: RateScope, subject: string, limit: number, now: Date): Promise<void> {
  const n = await store.increment(RATE_LIMITS[scope].key(subject), 1, RATE_WINDOW_MS, now);
  if (n > limit) throw rateLimitError(scope, limit);
}
