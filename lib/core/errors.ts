/**
 * The service's errors, in one place. Errors travel between nodes as Moleculer errors: `code` is the HTTP
 * status and `type` names the condition; lib/http/envelope.ts turns them into the spec's {code, message}.
 */
import { Errors } from 'moleculer';

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
