/**
 * The spec's error envelope, in one place: `{code, message}` plus the enrichment the spec plans and the
 * service deploys: `field`, `remediation`, `request_id`, `retryable` and, for invalid input, `errors[]`.
 * Errors travel between nodes as Moleculer errors: `code` is the HTTP status, `type` names the condition,
 * `data` carries the details below; the envelope code is derived from the status. The HTTP layer adds the
 * request id (services/api.service.ts); everything else is decided here.
 */
import { Errors } from 'moleculer';

/** One invalid input: its path (`paymentMethod.chain`, `items[0]`, a query parameter or a header name); no path when the whole input is at fault. */
export interface FieldError {
  field?: string;
  message: string;
}

export interface ErrorEnvelope {
  code: number;
  message: string;
  /** the first invalid input's path; absent when no single input is at fault */
  field?: string;
  /** one sentence: what to change (the header, setting, command or value that fixes it) */
  remediation: string;
  /** = the X-Request-Id header of the response and the id in the server's log line */
  request_id: string;
  /** true only where the same request can succeed later */
  retryable: boolean;
  /** every invalid input at once (validation failures); errors[0] is the one `message` and `field` name */
  errors?: FieldError[];
}

/** What a thrower may add to status and message. */
export interface ErrorDetails {
  field?: string;
  remediation?: string;
  retryable?: boolean;
  errors?: FieldError[];
}

/** Envelope code for an HTTP status (spec: Errors). */
export function envelopeCode(status: number): number {
  if (status === 400 || status === 413 || status === 415 || status === 422) return 3;
  if (status === 401 || status === 403) return 7;
  if (status === 404 || status === 405) return 2;
  if (status === 409) return 5;
  if (status === 429) return 4;
  if (status >= 400 && status < 500) return 3;
  return 1;
}

export const AUTH_MESSAGE = 'missing or invalid authorization header';

/** The fixes that more than one thrower names. */
export const REMEDIATION = {
  apiKey:
    'Send your API key in the X-API-Key header (service_sk_test_… for sandbox, service_sk_live_… for live); register with `payments login` to get one.',
  apiKeyOrBearer:
    'Send your API key in the X-API-Key header, or an operator-issued bearer token in Authorization: Bearer <token> (with X-Merchant-Id when it owns several merchants).',
  retryLater: 'Send the same request again in a few seconds.',
  internal: 'Send the same request again later; if it keeps failing, give the operator this request_id.',
  notFound: 'Check the id in the path: use an id this API returned to the same merchant (same API key and environment).',
  conflict: 'Read the resource again and act on its current state; repeating this request unchanged gives the same answer.',
  idempotency: 'Resend the original payload with this Idempotency-Key, or use a new Idempotency-Key for a different payload.',
  cursor: 'Pass the next_cursor of the previous page unchanged, or omit cursor to start from the first page.',
  rails: 'Choose a (chain, network, token) triple listed by GET /v1/payment_methods.',
  json: 'Send a JSON object body with Content-Type: application/json.',
} as const;

export class ServiceError extends Errors.MoleculerError {
  constructor(status: number, message: string, type = 'SERVICE_ERROR', data?: ErrorDetails) {
    super(message, status, type, data);
    this.name = 'ServiceError';
  }
}

export const badRequest = (message: string, details?: ErrorDetails) => new ServiceError(400, message, 'BAD_REQUEST', details);
export const notFound = (what = 'resource', details?: ErrorDetails) => new ServiceError(404, `${what} not found`, 'NOT_FOUND', details);
export const unauthorized = (remediation: string = REMEDIATION.apiKey) =>
  new ServiceError(401, AUTH_MESSAGE, 'UNAUTHORIZED', { remediation });
export const forbidden = (message = AUTH_MESSAGE, details?: ErrorDetails) => new ServiceError(403, message, 'FORBIDDEN', details);
export const conflict = (message: string, details?: ErrorDetails) => new ServiceError(409, message, 'CONFLICT', details);
export const rateLimited = (message = 'rate limit exceeded, retry later', details?: ErrorDetails) =>
  new ServiceError(429, message, 'RATE_LIMITED', details);
/** 503 whose message is written for the client (e.g. no fresh rate): kept, unlike other 5xx messages */
export const unavailable = (message: string, details?: ErrorDetails) => new ServiceError(503, message, 'UNAVAILABLE_EXPLAINED', details);
export const IDEMPOTENCY_MISMATCH = 'idempotency key was already used with a different payload';

/** The refusals every paged list shares: a cursor it did not hand out, a bad `limit` (its message given). */
export const invalidCursor = () =>
  badRequest('cursor is not valid; pass the next_cursor of the previous page unchanged', {
    field: 'cursor',
    remediation: REMEDIATION.cursor,
  });
export const invalidLimit = (message: string) =>
  badRequest(message, { field: 'limit', remediation: 'Send limit as a whole number in the range the message names, or leave it out.' });

/** A refusal of several inputs at once: the first one's message and field lead, all are listed. */
export function invalidFields(errors: FieldError[], remediation?: string): ServiceError {
  return badRequest(errors[0].message, { field: errors[0].field, remediation, errors });
}

/**
 * Runs independent input checks and keeps every 400 they raise, so that a client learns of all its
 * invalid fields at once; other errors pass through. A field already refused (by the schema, or the whole
 * input) is not checked again.
 */
export class FieldChecks {
  readonly errors: FieldError[] = [];
  private remediation: string | undefined;

  /** Whether `field` (a field inside it, one it is inside, or the whole input) is already refused. */
  refused(field: string): boolean {
    return this.errors.some(
      (e) => e.field === undefined || e.field === field || field.startsWith(`${e.field}.`) || e.field.startsWith(`${field}.`),
    );
  }

  /** Records the refusal `err` (a 400; with every field it lists); anything else is rethrown. */
  add(err: unknown): void {
    if (!(err instanceof ServiceError) || err.code !== 400) throw err;
    const d = (err.data ?? {}) as ErrorDetails;
    // the fix shown is the first problem's, as its message and field are
    if (this.errors.length === 0) this.remediation = d.remediation;
    if (d.errors?.length) this.errors.push(...d.errors);
    else this.errors.push(d.field ? { field: d.field, message: err.message } : { message: err.message });
  }

  /** The value of `check`, or undefined when it refused the input (recorded) or `field` is already refused. */
  run<T>(field: string, check: () => T): T | undefined {
    if (this.refused(field)) return undefined;
    try {
      return check();
    } catch (e) {
      this.add(e);
      return undefined;
    }
  }

  /** Throws one 400 listing everything recorded, if anything was. */
  throwIfAny(): void {
    if (this.errors.length > 0) throw invalidFields(this.errors, this.remediation);
  }
}

/** What a thrown error says about itself (Moleculer errors, ours, body-parser and plain errors). */
interface Thrown {
  code?: unknown;
  message?: unknown;
  type?: unknown;
  data?: unknown;
}

/** The default fix of a condition when the thrower named none. */
function defaultRemediation(status: number, type: unknown, message: string, field: string | undefined): string {
  if (type === 'STORE_CONFLICT') return REMEDIATION.retryLater;
  if (status === 401 || (status === 403 && message === AUTH_MESSAGE)) return REMEDIATION.apiKey;
  if (status === 403) return 'Use the credentials of the merchant that owns this resource, or ask the operator for the access it needs.';
  if (status === 404) return REMEDIATION.notFound;
  if (status === 405) return 'Use a method this path has in openapi.json.';
  if (status === 409) return REMEDIATION.conflict;
  if (status === 413) return 'Send a smaller body: the limit is the BODY_LIMIT setting (64kb by default).';
  if (status === 415) return REMEDIATION.json;
  if (status === 429) return 'Wait a minute before sending more requests, then retry.';
  if (status >= 500) return status === 503 ? REMEDIATION.retryLater : REMEDIATION.internal;
  if (field) return `Correct ${field} as the message says and send the request again.`;
  return 'Correct the request as the message says and send it again.';
}

/** Whether the same request can succeed later: 429, 5xx and lost store races, unless the thrower knows better. */
function defaultRetryable(status: number, type: unknown): boolean {
  return status === 429 || status >= 500 || type === 'STORE_CONFLICT';
}

/** The client-facing message: the thrower's for client errors, fixed wording for credentials and internals. */
function clientMessage(status: number, e: Thrown | null | undefined, own: boolean): string {
  if (status >= 500) {
    if (status === 503 && e?.type === 'UNAVAILABLE_EXPLAINED' && typeof e.message === 'string') return e.message;
    return status === 503 ? 'service temporarily unavailable, retry later' : 'internal server error';
  }
  // a store race the handler did not resolve: the request changed nothing and may be retried
  if (e?.type === 'STORE_CONFLICT') return 'the resource was changed by a concurrent request; retry';
  if ((status === 401 || status === 403) && e?.type !== 'FORBIDDEN') return AUTH_MESSAGE;
  if (e?.type === 'NOT_FOUND' && status === 404 && !own) return 'not found';
  return typeof e?.message === 'string' && e.message ? e.message : 'bad request';
}

/**
 * Converts anything thrown into the status and envelope sent to the client; never leaks internals (a
 * 500 says nothing but its request id). `requestId` is the request's X-Request-Id.
 */
export function toEnvelope(err: unknown, requestId: string): { status: number; body: ErrorEnvelope } {
  const e = err as Thrown | null | undefined;
  // ours, here or regenerated by Moleculer after crossing from another node (then a plain Error by name)
  const own = err instanceof ServiceError || (e as { name?: unknown } | null)?.name === 'ServiceError';
  let status = typeof e?.code === 'number' && e.code >= 400 && e.code < 600 ? e.code : 500;
  // moleculer-web and Moleculer's own client errors that we expose with our wording
  if (e?.type === 'REQUEST_SKIPPED' || e?.type === 'REQUEST_TIMEOUT') status = 503;
  // only our own errors' details reach a client (a library's `data` may hold anything), and no 500's
  const d: ErrorDetails = own && status !== 500 && e?.data && typeof e.data === 'object' ? (e.data as ErrorDetails) : {};
  const message = clientMessage(status, e, own);
  const field = status < 500 && typeof d.field === 'string' && d.field ? d.field : undefined;
  const errors = d.errors?.length ? d.errors : field && status === 400 ? [{ field, message }] : undefined;
  return {
    status,
    body: {
      code: envelopeCode(status),
      message,
      ...(field ? { field } : {}),
      remediation: d.remediation || defaultRemediation(status, e?.type, message, field),
      request_id: requestId,
      retryable: typeof d.retryable === 'boolean' ? d.retryable : defaultRetryable(status, e?.type),
      ...(errors ? { errors: errors.map((x) => (x.field ? { field: x.field, message: x.message } : { message: x.message })) } : {}),
    },
  };
}
