/**
 * An HTTP request in memory for a body middleware (lib/http/body-reader.ts, body-parser): a real
 * IncomingMessage on a socket that stays readable, its body pushed in chunks, and the middleware's outcome
 * (req.body, or the error it passed to next) once it has called next.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';

export type Middleware = (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void) => void;

export interface MemoryRequest {
  req: IncomingMessage & { body?: unknown };
  res: ServerResponse;
}

/** A POST with these headers and this body in chunks of `chunk` bytes (one chunk if 0); `end: false` leaves it open. */
export function memoryRequest(headers: Record<string, string>, body: Buffer, opts: { chunk?: number; end?: boolean } = {}): MemoryRequest {
  const socket = new PassThrough();
  const req = new IncomingMessage(socket as never) as MemoryRequest['req'];
  req.method = 'POST';
  req.url = '/';
  req.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const step = opts.chunk || body.length || 1;
  for (let i = 0; i < body.length; i += step) req.push(body.subarray(i, i + step));
  if (opts.end !== false) {
    req.push(null);
    req.complete = true;
  }
  return { req, res: new ServerResponse(req) };
}

export type Outcome = { body: unknown } | { error: Record<string, unknown> & { message: string } };

/** Runs the middleware on the request; resolves with what it passed on (next must be called exactly once). */
export function outcome(mw: Middleware, { req, res }: MemoryRequest): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let calls = 0;
    mw(req, res, (err?: unknown) => {
      if (++calls > 1) return reject(new Error('next called twice'));
      resolve(err ? { error: err as never } : { body: req.body });
    });
  });
}
