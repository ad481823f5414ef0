/**
 * The spec's error envelope {code, message}: what a client receives for anything thrown. The envelope code
 * is derived from the HTTP status (lib/core/errors.ts carries the status and the condition).
 */
import { AUTH_MESSAGE, ServiceError } from '../core/errors.ts';

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
