/**
 * Typed errors: every non-2xx answer of the API becomes a PaymentsError carrying the envelope's `code`
 * (1 internal, 2 not found, 3 bad request, 4 rate limited, 5 conflict, 7 credentials) and the HTTP
 * status, with a subclass per code so callers can `catch (e) { if (e instanceof ConflictError) … }`.
 */

export const ErrorCode = {
  INTERNAL: 1,
  NOT_FOUND: 2,
  BAD_REQUEST: 3,
  RATE_LIMITED: 4,
  CONFLICT: 5,
  AUTH: 7,
} as const;

export class PaymentsError extends Error {
  /** the envelope's code (see ErrorCode); 0 when the answer carried no envelope */
  readonly code: number;
  /** the HTTP status; 0 for a network failure */
  readonly status: number;
  constructor(status: number, code: number, message: string) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
  }

  /** Builds the typed error of an answer from its `{code, message}` body (or its status alone). */
  static async fromResponse(res: Response): Promise<PaymentsError> {
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    return PaymentsError.from(res.status, body);
  }

  static from(status: number, body: unknown): PaymentsError {
    const env = body as { code?: unknown; message?: unknown } | undefined;
    const code = typeof env?.code === 'number' ? env.code : 0;
    const message = typeof env?.message === 'string' ? env.message : `HTTP ${status}`;
    const Cls = CLASSES[code] ?? PaymentsError;
    return new Cls(status, code, message);
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
}

const CLASSES: Record<number, new (status: number, code: number, message: string) => PaymentsError> = {
  1: InternalError,
  2: NotFoundError,
  3: BadRequestError,
  4: RateLimitedError,
  5: ConflictError,
  7: AuthenticationError,
};
