/**
 * The spec's error envelope {code, message}, in one place.
 * Errors travel between nodes as Moleculer errors: `code` is the HTTP status,
 * `type` names the condition, and the envelope code is derived from the status.
 */
import { Errors } from 'moleculer';

export interface ErrorEnvelope {
  code: number;
  message: string;
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

export class ServiceError extends Errors.MoleculerError {
  constructor(status: number, message: string, type = 'SERVICE_ERROR', data?: unknown) {
    super(message, status, type, data);
    this.name = 'ServiceError';
  }
}

export const badRequest = (message: string, data?: unknown) => new ServiceError(400, message, 'BAD_REQUEST', data);
export const notFound = (what = 'resource') => new ServiceError(404, `${what} not found`, 'NOT_FOUND');
export const unauthorized = () => new ServiceError(401, AUTH_MESSAGE, 'UNAUTHORIZED');
export const forbidden = (message = AUTH_MESSAGE) => new ServiceError(403, message, 'FORBIDDEN');
export const conflict = (message: string) => new ServiceError(409, message, 'CONFLICT');
export const rateLimited = (message = 'rate limit exceeded, retry later') => new ServiceError(429, message, 'RATE_LIMITED');
/** 503 whose message is written for the client (e.g. no fresh rate): kept, unlike other 5xx messages */
export const unavailable = (message: string) => new ServiceError(503, message, 'UNAVAILABLE_EXPLAINED');
export const IDEMPOTENCY_MISMATCH = 'idempotency key was already used with a different payload';

/** Converts anything thrown into the status and envelope sent to the client; never leaks internals. */
export function toEnvelope(err: unknown): { status: number; body: ErrorEnvelope } {
  const e = err as { code?: unknown; message?: unknown; type?: unknown };
  let status = typeof e?.code === 'number' && e.code >= 400 && e.code < 600 ? e.code : 500;
  // moleculer-web and Moleculer's own client errors that we expose with our wording
  if (e?.type === 'REQUEST_SKIPPED' || e?.type === 'REQUEST_TIMEOUT') status = 503;
  if (status >= 500) {
    const message =
      status === 503
        ? e?.type === 'UNAVAILABLE_EXPLAINED' && typeof e.message === 'string'
          ? e.message
          : 'service temporarily unavailable, retry later'
        : 'internal server error';
    return { status, body: { code: 1, message } };
  }
  let message = typeof e?.message === 'string' && e.message ? e.message : 'bad request';
  // a store race the handler did not resolve: the request changed nothing and may be retried
  if (e?.type === 'STORE_CONFLICT') message = 'the resource was changed by a concurrent request; retry';
  if (status === 401 || status === 403) message = e?.type === 'FORBIDDEN' ? message : AUTH_MESSAGE;
  if (e?.type === 'NOT_FOUND' && status === 404 && !(err instanceof ServiceError)) message = 'not found';
  return { status, body: { code: envelopeCode(status), message } };
}
