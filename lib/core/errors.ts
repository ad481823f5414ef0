/**
 * The service's errors, in one place: the conditions (`code` is the HTTP status, `type` names the
 * condition) and what a thrower adds for the client (`field`, `remediation`, `retryable`, every invalid
 * field in `errors`). Errors travel between nodes as Moleculer errors, the details in `data`;
 * lib/http/envelope.ts turns them into the spec's enriched envelope.
 */
import { Errors } from 'moleculer';

/** One invalid input: its path (`paymentMethod.chain`, `items[0]`, a query parameter or a header name); no path when the whole input is at fault. */
export interface FieldError {
  field?: string;
  message: string;
}

/** What a thrower may add to status and message. */
export interface ErrorDetails {
  field?: string;
  remediation?: string;
  retryable?: boolean;
  errors?: FieldError[];
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
    // a refusal (4xx) is an answer, not a fault: its stack is never logged (only a 5xx's cause is), and
    // capturing it, twice (Error's constructor, then MoleculerError's captureStackTrace), was a fifth of a 401's CPU
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(message, status, type, data);
    } finally {
      Error.stackTraceLimit = limit;
    }
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

/**
 * An error that proves its request wrote nothing: a refusal (4xx: a check, a limit, a conflict rolled back)
 * by code that decides before it writes. Any other failure (a time-out, a node gone mid-call, a store that
 * lost its connection) leaves the outcome unknown: the write may still commit.
 */
export function refusedBeforeWrite(e: unknown): boolean {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' && code >= 400 && code < 500;
}
