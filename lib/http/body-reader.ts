/**
 * The gateway's JSON body reader: body-parser's json middleware with the gateway's options (strict, the
 * BODY_LIMIT, and lib/core/json-body.ts's exact numbers and bounded nesting), behind a fast path for the
 * common request: a Content-Length within the limit, `application/json` in UTF-8 (or no charset) and no
 * Content-Encoding. That path reads the chunks itself, scans the bytes once (nesting and numbers that may
 * be inexact), and parses with the exact-number reviver only when some number needs it: V8 parses with
 * any reviver on a slow path that calls it for every value. It answers every body as body-parser does
 * (the same value, or an error with the same status, type and message where a client sees the message);
 * anything else (chunked, compressed, another charset or type, over the limit: 413) is body-parser's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import ApiGateway from 'moleculer-web';
import { checkJsonDepth, exactNumberReviver, scanJsonBody } from '../core/json-body.ts';

type BodyRequest = IncomingMessage & { body?: unknown; upgrade?: boolean };
type Next = (err?: unknown) => void;
export type BodyMiddleware = (req: BodyRequest, res: ServerResponse, next: Next) => void;

/** body-parser's json options of the gateway. */
export function jsonBodyOptions(limit: string) {
  return {
    strict: true,
    limit,
    reviver: exactNumberReviver,
    verify: (_req: unknown, _res: unknown, buf: Buffer) => checkJsonDepth(buf),
  };
}

/** body-parser's json middleware with the gateway's options: reads whatever the fast path leaves. */
export function bodyParserJson(limit: string): BodyMiddleware {
  return ApiGateway.bodyParser.json(jsonBodyOptions(limit)) as BodyMiddleware;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2 };

/**
 * A BODY_LIMIT in bytes as body-parser reads it (the `bytes` package, 1024-based) for the forms the
 * configuration takes (500, 500b, 64kb, 1mb; config/env.ts); -1 for any other, which the fast path
 * then never takes.
 */
export function limitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)?$/i.exec(limit);
  return m ? Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()] : -1;
}

// the media types the fast path reads: a subset of what body-parser reads as JSON in UTF-8
const JSON_UTF8 = /^application\/json(?: *; *charset *= *utf-8)? *$/i;
const DIGITS = /^\d+$/;

/** The body's length when the fast path reads it, else -1. */
function fastLength(req: BodyRequest, limit: number): number {
  const h = req.headers;
  const length = h['content-length'];
  const type = h['content-type'];
  const encoding = h['content-encoding'];
  if (length === undefined || h['transfer-encoding'] !== undefined || type === undefined) return -1;
  if (type !== 'application/json' && !JSON_UTF8.test(type)) return -1;
  if (encoding && encoding.toLowerCase() !== 'identity') return -1;
  if (!DIGITS.test(length) || Number(length) > limit) return -1;
  // a request body-parser would not read (on-finished sees it finished: an upgrade, a closed socket, a
  // body already read) stays with body-parser
  if (req.upgrade || !req.socket?.readable || (req.complete && !req.readable)) return -1;
  return Number(length);
}

/** An error as body-parser passes it on (http-errors' fields: status, statusCode, expose, type). */
function bodyError(status: number, err: unknown, fields: { type?: string; code?: string } = {}): Error {
  const e = (err instanceof Error ? err : new Error(String(err))) as Error & Record<string, unknown>;
  const s = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : status;
  return Object.assign(e, { expose: s < 500, status: s, statusCode: s }, fields, e.type === undefined ? {} : { type: e.type });
}

/** JSON's whitespace (RFC 8259): space, tab, line feed, carriage return. */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/**
 * The body's value as body-parser's strict json parser gives it: UTF-8 without a leading byte order mark
 * (iconv-lite drops it), `{}` for an empty body, an object or array only, numbers checked for exactness
 * only where `inexact` says a number may need it.
 */
function parseStrict(buf: Buffer, inexact: boolean): unknown {
  const bom = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
  const text = buf.toString('utf8', bom ? 3 : 0);
  if (text.length === 0) return {};
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  const first = text[i];
  if (first !== '{' && first !== '[')
    throw new SyntaxError(
      `a JSON body must be an object or an array (strict), not ${first === undefined ? 'empty' : JSON.stringify(first)}`,
    );
  return inexact ? JSON.parse(text, exactNumberReviver) : JSON.parse(text);
}

/**
 * The body reader: body-parser's json middleware as `bodyParserJson(limit)`, with the fast path in front.
 * A request destroyed while its body is read (the client left) is passed on once, as raw-body does.
 */
export function jsonBodyReader(limit: string): BodyMiddleware {
  const fallback = bodyParserJson(limit);
  const max = limitBytes(limit);
  return function readJsonBody(req, res, next) {
    const h = req.headers;
    if (h['content-length'] === undefined && h['transfer-encoding'] === undefined) {
      // no body (type-is's hasBody): body-parser only sets req.body
      if (!('body' in req)) req.body = undefined;
      return next();
    }
    const length = fastLength(req, max);
    if (length < 0) return fallback(req, res, next);
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err?: unknown) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('close', onAborted);
      next(err);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    // raw-body's error for a request destroyed before its end (a client that left, a socket error): Node
    // destroys an IncomingMessage for any error, and flags it aborted when that comes before the end
    const onAborted = () => finish(bodyError(400, new Error('request aborted'), { type: 'request.aborted', code: 'ECONNABORTED' }));
    const onEnd = () => {
      if (received !== length)
        return finish(bodyError(400, new Error('request size did not match content length'), { type: 'request.size.invalid' }));
      const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      let inexact: boolean;
      try {
        inexact = scanJsonBody(buf);
      } catch (err) {
        return finish(bodyError(403, err, { type: 'entity.verify.failed' })); // body-parser's verify failure
      }
      try {
        req.body = parseStrict(buf, inexact);
      } catch (err) {
        return finish(bodyError(400, err, { type: 'entity.parse.failed' }));
      }
      finish();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('close', onAborted);
  };
}
