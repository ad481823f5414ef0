/**
 * The typed client: openapi-fetch over the types generated from openapi.json, plus what every call
 * needs: the X-API-Key header, an automatic Idempotency-Key on the operations that take one (so a
 * retried create never creates twice), retries with exponential backoff and full jitter on 429, 5xx and
 * network failures for idempotent calls only (GET, HEAD, PUT, DELETE, OPTIONS, and POSTs carrying an
 * Idempotency-Key), and typed errors carrying the envelope's `code`.
 *
 * `client.api` is the raw openapi-fetch client for any operation; the methods below unwrap the answer
 * and throw a PaymentsError subclass on anything else than 2xx.
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './generated/schema.ts';
import { IDEMPOTENT_OPERATIONS } from './generated/idempotent.ts';
import { NetworkError, PaymentsError } from './errors.ts';
import { streamEvents, type StreamOptions } from './sse.ts';

export type Schemas = components['schemas'];
export type PaymentSession = Schemas['PaymentSession'];
export type CreatePaymentSession = Schemas['CreatePaymentSessionRequest'];
export type Event = Schemas['Event'];
export type EventList = Schemas['EventList'];
export type Rail = Schemas['Rail'];
export type WebhookDeliveryLog = Schemas['WebhookDeliveryLog'];
export type ListEventsQuery = NonNullable<operations['listEvents']['parameters']['query']>;
export type ListSessionsQuery = NonNullable<operations['listPaymentSessions']['parameters']['query']>;
export type Payout = Schemas['Payout'];
export type CreatePayout = Schemas['CreatePayoutRequest'];
export type Wallet = Schemas['Wallet'];
export type RatesQuery = NonNullable<operations['listRates']['parameters']['query']>;
export type ListWalletsQuery = NonNullable<operations['listWallets']['parameters']['query']>;
export type ListPayoutsQuery = NonNullable<operations['listPayouts']['parameters']['query']>;
export type Refund = Schemas['Refund'];
export type CreateRefund = Schemas['CreateRefundRequest'];
export type ListRefundsQuery = NonNullable<operations['listRefunds']['parameters']['query']>;

export interface ClientOptions {
  /** e.g. http://localhost:3000 */
  baseUrl: string;
  /** service_sk_test_… or service_sk_live_…; public calls work without one */
  apiKey?: string;
  /** retries of an idempotent call after 429, 5xx or a network failure (default 3) */
  maxRetries?: number;
  /** first backoff delay in ms (default 500), doubled per retry with full jitter, at most 8 s; a Retry-After header wins */
  retryBaseMs?: number;
  fetch?: typeof fetch;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const IDEMPOTENT = new Set(IDEMPOTENT_OPERATIONS);
const MAX_DELAY_MS = 8000;

function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(res: Response): number | null {
  const v = res.headers.get('retry-after');
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - Date.now());
}

/** Whether an error answer says a retry cannot help (the envelope's `retryable: false`, e.g. a rate no source is configured for). */
async function saysNotRetryable(res: Response): Promise<boolean> {
  if (!/json/.test(res.headers.get('content-type') ?? '')) return false;
  const body = (await res
    .clone()
    .json()
    .catch(() => null)) as { retryable?: unknown } | null;
  return body?.retryable === false;
}

/** A fetch that retries what is safe to retry. Exported for tests and for callers building their own client. */
export function retryingFetch(
  base: typeof fetch,
  opts: { maxRetries?: number; retryBaseMs?: number; onRetry?: (attempt: number, why: string) => void } = {},
) {
  const max = opts.maxRetries ?? 3;
  const baseMs = opts.retryBaseMs ?? 500;
  const backoff = (attempt: number) => Math.random() * Math.min(MAX_DELAY_MS, baseMs * 2 ** attempt);
  return async (request: Request): Promise<Response> => {
    const idempotent = SAFE_METHODS.has(request.method) || request.headers.has('Idempotency-Key');
    for (let attempt = 0; ; attempt++) {
      const last = !idempotent || attempt >= max;
      let res: Response;
      try {
        res = await base(last ? request : request.clone());
      } catch (e) {
        if (request.signal?.aborted) throw e;
        if (last) throw NetworkError.unreachable(request.method, request.url, e);
        opts.onRetry?.(attempt + 1, (e as Error).message);
        await sleep(backoff(attempt));
        continue;
      }
      if (last || !(res.status === 429 || res.status >= 500) || (await saysNotRetryable(res))) return res;
      opts.onRetry?.(attempt + 1, `HTTP ${res.status}`);
      await res.body?.cancel();
      await sleep(Math.min(retryAfterMs(res) ?? backoff(attempt), 60_000));
    }
  };
}

export class PaymentsClient {
  /** the raw openapi-fetch client: every operation of openapi.json, typed */
  readonly api: Client<paths>;
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: retryingFetch(this.fetchImpl, opts),
    });
    const apiKey = opts.apiKey;
    const headers: Middleware = {
      onRequest({ request, schemaPath }) {
        if (apiKey && !request.headers.has('X-API-Key')) request.headers.set('X-API-Key', apiKey);
        if (IDEMPOTENT.has(`${request.method} ${schemaPath}`) && !request.headers.has('Idempotency-Key')) {
          request.headers.set('Idempotency-Key', newIdempotencyKey());
        }
        return request;
      },
    };
    this.api.use(headers);
  }

  /** Unwraps an openapi-fetch answer: the data on 2xx, a typed PaymentsError otherwise. */
  async unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok) throw PaymentsError.from(response.status, error, response.headers);
    return data as T;
  }

  /** GET /v1/me */
  me() {
    return this.unwrap(this.api.GET('/v1/me'));
  }

  /** the rails you accept: every session, checkout intent and x402 challenge on another rail is refused (400 on paymentMethod) */
  readonly railPolicy = {
    /** GET /v1/me/rail-policy: {allowed_rails (null: none), effective_rails, updated_at} */
    get: () => this.unwrap(this.api.GET('/v1/me/rail-policy')),
    /** PUT /v1/me/rail-policy: `<chain>:<network>:<token>` keys; null removes the policy (every enabled rail) */
    set: (allowedRails: string[] | null) => this.unwrap(this.api.PUT('/v1/me/rail-policy', { body: { allowed_rails: allowedRails } })),
  };

  /** GET /v1/payment_methods: the enabled rails */
  paymentMethods() {
    return this.unwrap(this.api.GET('/v1/payment_methods'));
  }

  readonly sessions = {
    /** POST /v1/payment_sessions; an Idempotency-Key is added unless you pass one */
    create: (body: CreatePaymentSession, opts: { idempotencyKey?: string } = {}) =>
      this.unwrap(
        this.api.POST('/v1/payment_sessions', {
          body,
          ...(opts.idempotencyKey ? { params: { header: { 'Idempotency-Key': opts.idempotencyKey } } } : {}),
        }),
      ),
    get: (sessionId: string) =>
      this.unwrap(this.api.GET('/v1/payment_sessions/{session_id}', { params: { path: { session_id: sessionId } } })),
    list: (query: ListSessionsQuery = {}) => this.unwrap(this.api.GET('/v1/payment_sessions', { params: { query } })),
    /** completes a sandbox session without a chain transaction */
    simulate: (sessionId: string) =>
      this.unwrap(this.api.POST('/v1/payment_sessions/{session_id}/simulate', { params: { path: { session_id: sessionId } } })),
    /** the session's webhook delivery log */
    webhooks: (sessionId: string) =>
      this.unwrap(this.api.GET('/v1/payment_sessions/{session_id}/webhooks', { params: { path: { session_id: sessionId } } })),
    /** redelivers the session's webhooks now (or only `eventId`) */
    retryWebhooks: (sessionId: string, eventId?: string) =>
      this.unwrap(
        this.api.POST('/v1/payment_sessions/{session_id}/webhook/retry', {
          params: { path: { session_id: sessionId } },
          body: eventId ? { event_id: eventId } : {},
        }),
      ),
  };

  /** GET /v1/rates: spot rates (exact decimal strings) */
  rates(query: RatesQuery = {}) {
    return this.unwrap(this.api.GET('/v1/rates', { params: { query } }));
  }

  readonly payouts = {
    /** POST /v1/payouts; an Idempotency-Key is added unless you pass one */
    create: (body: CreatePayout, opts: { idempotencyKey?: string } = {}) =>
      this.unwrap(
        this.api.POST('/v1/payouts', {
          body,
          ...(opts.idempotencyKey ? { params: { header: { 'Idempotency-Key': opts.idempotencyKey } } } : {}),
        }),
      ),
    get: (payoutId: string) => this.unwrap(this.api.GET('/v1/payouts/{payout_id}', { params: { path: { payout_id: payoutId } } })),
    /** GET /v1/payouts: newest first, one page */
    list: (query: ListPayoutsQuery = {}) => this.unwrap(this.api.GET('/v1/payouts', { params: { query } })),
  };

  readonly refunds = {
    /**
     * POST /v1/payment_sessions/{session_id}/refunds; without `destination` the money goes back to the address
     * that paid, without `amount_subunits` an overpaid session refunds its excess and any other everything
     * left. An Idempotency-Key is added unless you pass one.
     */
    create: (sessionId: string, body: CreateRefund = {}, opts: { idempotencyKey?: string } = {}) =>
      this.unwrap(
        this.api.POST('/v1/payment_sessions/{session_id}/refunds', {
          params: {
            path: { session_id: sessionId },
            ...(opts.idempotencyKey ? { header: { 'Idempotency-Key': opts.idempotencyKey } } : {}),
          },
          body,
        }),
      ),
    get: (sessionId: string, refundId: string) =>
      this.unwrap(
        this.api.GET('/v1/payment_sessions/{session_id}/refunds/{refund_id}', {
          params: { path: { session_id: sessionId, refund_id: refundId } },
        }),
      ),
    /** a session's refunds, newest first, one page */
    list: (sessionId: string, query: ListRefundsQuery = {}) =>
      this.unwrap(this.api.GET('/v1/payment_sessions/{session_id}/refunds', { params: { path: { session_id: sessionId }, query } })),
  };

  readonly wallets = {
    list: (query: ListWalletsQuery = {}) => this.unwrap(this.api.GET('/v1/wallets', { params: { query } })),
    get: (walletId: string) => this.unwrap(this.api.GET('/v1/wallets/{wallet_id}', { params: { path: { wallet_id: walletId } } })),
  };

  readonly events = {
    /** GET /v1/events: one page, newest first */
    list: (query: ListEventsQuery = {}) => this.unwrap(this.api.GET('/v1/events', { params: { query } })),
    /** every event matching the query, newest first, page after page */
    all: async function* (this: PaymentsClient, query: Omit<ListEventsQuery, 'cursor'> = {}): AsyncGenerator<Event> {
      let cursor: string | undefined;
      do {
        const page: EventList = await this.events.list({ ...query, ...(cursor ? { cursor } : {}) });
        yield* page.data;
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    }.bind(this),
    /** GET /v1/events/{event_id} */
    get: (eventId: string) => this.unwrap(this.api.GET('/v1/events/{event_id}', { params: { path: { event_id: eventId } } })),
    /** delivers one event to webhook_url again now (payment session events) */
    resend: async (eventId: string) => {
      const event = await this.events.get(eventId);
      if (typeof event.session_id !== 'string') throw new Error(`${event.event_type} events cannot be resent, only payment session events`);
      const log = await this.sessions.retryWebhooks(event.session_id, eventId);
      return log.events.find((e) => e.event_id === eventId)!;
    },
    /** GET /v1/events/stream: new events as they commit, reconnecting with Last-Event-ID by itself */
    stream: (opts: Omit<StreamOptions, 'baseUrl' | 'apiKey' | 'fetch'> = {}) => {
      if (!this.apiKey) throw new Error('the event stream needs an API key');
      return streamEvents({ ...opts, baseUrl: this.baseUrl, apiKey: this.apiKey, fetch: this.fetchImpl });
    },
  };
}

export function createPaymentsClient(opts: ClientOptions): PaymentsClient {
  return new PaymentsClient(opts);
}
