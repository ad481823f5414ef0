/**
 * Typed errors: every non-2xx answer of the API becomes a PaymentsError carrying the envelope: `code`
 * (1 internal, 2 not found, 3 bad request, 4 rate limited, 5 conflict, 7 credentials), `message`, `field`
 * (the first invalid input), `remediation` (what to do), `request_id` (quote it to the operator),
 * `retryable` and `errors` (every invalid input), with the HTTP status and a subclass per code so callers
 * can `catch (e) { if (e instanceof ConflictError) … }`.
 */

export const ErrorCode = {
  INTERNAL: 1,
  NOT_FOUND: 2,
  BAD_REQUEST: 3,
  RATE_LIMITED: 4,
  CONFLICT: 5,
  AUTH: 7,
} as const;

/** One invalid input of a refused request. */
export interface FieldError {
  /** its path, e.g. `paymentMethod.chain`; absent when the whole input is at fault */
  field?: string;
  message: string;
}

/** What an error carries besides status, code and message (all optional: a proxy's answer has none). */
export interface ErrorDetails {
  field?: string;
  remediation?: string;
  request_id?: string;
  retryable?: boolean;
  errors?: FieldError[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class PaymentsError extends Error {
  /** the envelope's code (see ErrorCode); 0 when the answer carried no envelope */
  readonly code: number;
  /** the HTTP status; 0 for a network failure */
  readonly status: number;
  /** the first invalid input's path (`paymentMethod.chain`, `webhook_url`, a header name); undefined when no single input is at fault */
  readonly field: string | undefined;
  /** one sentence saying what fixes it: the header, setting, command or value */
  readonly remediation: string | undefined;
  /** the request's id (its X-Request-Id): quote it to the operator */
  readonly request_id: string | undefined;
  /** whether the same request can succeed later (the server's word; else: 429, 5xx and network failures) */
  readonly retryable: boolean;
  /** every invalid input of the request (validation failures); empty otherwise */
  readonly errors: FieldError[];
  constructor(status: number, code: number, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.field = details.field;
    this.remediation = details.remediation;
    this.request_id = details.request_id;
    this.retryable = details.retryable ?? (status === 0 || status === 429 || status >= 500);
    this.errors = details.errors ?? [];
  }

  /** Builds the typed error of an answer from its envelope body (or its status alone). */
  static async fromResponse(res: Response): Promise<PaymentsError> {
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    return PaymentsError.from(res.status, body, res.headers);
  }

  /** `headers` supplies the request id when the body has none (an answer that is not the envelope). */
  static from(status: number, body: unknown, headers?: Headers): PaymentsError {
    const env = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const code = typeof env.code === 'number' ? env.code : 0;
    const message = str(env.message) ?? `HTTP ${status}`;
    const errors = Array.isArray(env.errors)
      ? env.errors
          .filter((e): e is Record<string, unknown> => !!e && typeof e === 'object' && typeof (e as FieldError).message === 'string')
          .map((e) => (str(e.field) ? { field: str(e.field), message: e.message as string } : { message: e.message as string }))
      : undefined;
    const Cls = CLASSES[code] ?? PaymentsError;
    return new Cls(status, code, message, {
      field: str(env.field),
      remediation: str(env.remediation),
      request_id: str(env.request_id) ?? headers?.get('x-request-id') ?? undefined,
      retryable: typeof env.retryable === 'boolean' ? env.retryable : undefined,
      errors,
    });
  }
}

export class InternalError extends PaymentsError {}
export class NotFoundError extends PaymentsError {}
export class BadRequestError extends PaymentsError {}
export class RateLimitedError extends PaymentsError {}
export class ConflictError extends PaymentsError {}
export class AuthenticationError extends PaymentsError {}
/** The request never got an answer (connection refused, DNS, aborted). */
export class NetworkError extends PaymentsError {
  constructor(message: string, cause?: unknown) {
    super(0, 0, message);
    if (cause !== undefined) Object.defineProperty(this, 'cause', { value: cause, enumerable: false });
  }

  /** A request that got no answer, naming the URL to check and why (`ECONNREFUSED`, `ENOTFOUND`, …). */
  static unreachable(method: string, url: string | URL, e: unknown): NetworkError {
    const u = new URL(url);
    const cause = (e as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const why =
      typeof cause?.code === 'string'
        ? cause.code
        : typeof cause?.message === 'string'
          ? cause.message
          : String((e as Error)?.message ?? e);
    return new NetworkError(
      `could not reach ${u.origin}${u.pathname} (${method}: ${why}); is the service running there? (--base-url, PAYMENTS_BASE_URL)`,
      e,
    );
  }
}

const CLASSES: Record<number, new (status: number, code: number, message: string, details?: ErrorDetails) => PaymentsError> = {
  1: InternalError,
  2: NotFoundError,
  3: BadRequestError,
  4: RateLimitedError,
  5: ConflictError,
  7: AuthenticationError,
};
