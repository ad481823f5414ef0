/**
 * Reading a JSON request body without changing what the client sent:
 * - numbers are checked against their source text (JSON.parse hands the reviver each number's text): a
 *   number a double cannot carry exactly (0.123456789012345678, 9007199254740993, 1e999) is refused,
 *   never silently rounded; send such amounts as digit strings (`amount_subunits`);
 * - nesting deeper than MAX_JSON_DEPTH is refused before parsing (deep documents overflow recursive
 *   code: canonical JSON, JSON indexes);
 * - the reason reaches the client: the gateway re-wraps body errors (keeping message and type), so a
 *   reason is recognised by its prefix (`bodyErrorMessage`).
 */
import { decimalText } from './money.ts';

export const MAX_JSON_DEPTH = 32;

const PREFIX = 'request body: ';

function refuse(message: string): Error {
  // a SyntaxError, so the JSON reader treats it as a parse failure (400)
  return new SyntaxError(PREFIX + message);
}

/**
 * The client-facing message of a body the gateway could not read, or undefined for other errors: a
 * reason raised here, or a corrupt gzip/deflate/br body (zlib's errors carry string codes).
 */
export function bodyErrorMessage(err: unknown): string | undefined {
  const e = err as { message?: unknown; type?: unknown; code?: unknown } | null;
  if (!e || typeof e !== 'object') return undefined;
  if (typeof e.message === 'string' && e.message.startsWith(PREFIX) && typeof e.type === 'string' && e.type.startsWith('entity.'))
    return e.message;
  if (typeof e.code === 'string' && /^(Z_|ERR__|ERR_BROTLI|ERR_ZSTD)/.test(e.code))
    return 'request body does not decode with its Content-Encoding (corrupt gzip, deflate or br data)';
  return undefined;
}

/** Whether a number's source text means exactly the double it parsed to. */
export function isExactNumber(source: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const exp = /e([+-]?\d+)$/i.exec(source);
  if (exp && Math.abs(Number(exp[1])) > 400) return false; // 1e-999 is 0, 1e999 is Infinity
  try {
    return decimalText(source) === decimalText(value);
  } catch {
    return false;
  }
}

/** JSON.parse reviver: refuses numbers that lost digits on the way to a double. */
export function exactNumberReviver(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && context?.source !== undefined && !isExactNumber(context.source, value)) {
    const shown = context.source.length > 40 ? `${context.source.slice(0, 40)}…` : context.source;
    throw refuse(
      `${key ? `${key}: ` : ''}the number ${shown} cannot be carried exactly by a JSON number; send fewer digits, or an exact digit string (amount_subunits) where the field has one`,
    );
  }
  return value;
}

/**
 * One pass over the raw body: throws (a 400 with a reason) when it nests objects and arrays deeper than
 * `max`, and answers whether some number in it may not be exact, so that only such bodies pay for
 * JSON.parse with `exactNumberReviver` (a reviver makes V8 parse slowly and call it for every value).
 * A number without exponent, with at most 15 significant digits and at most 300 zeros before them, is
 * always exact (any decimal of 15 digits in a double's normal range survives the trip through a double and
 * back); anything else (an exponent, a 16th digit) is left to the reviver. In malformed JSON a number may
 * be misjudged: JSON.parse refuses such a body anyway, with the same error with or without a reviver.
 */
export function scanJsonBody(buf: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  const n = buf.length;
  let depth = 0;
  let inexact = false;
  for (let i = 0; i < n; i++) {
    const c = buf[i];
    if (c === 0x22) {
      // a string, to its closing quote; a backslash escapes the byte after it
      for (i++; i < n; i++) {
        const d = buf[i];
        if (d === 0x22) break;
        if (d === 0x5c) i++;
      }
    } else if (c >= 0x30 && c <= 0x39) {
      // a number from its first digit: digits and the decimal point, up to the byte after it
      let significant = 0;
      let zeros = 0;
      let d = c;
      for (;;) {
        if (d >= 0x30 && d <= 0x39) {
          if (significant > 0 || d !== 0x30) significant++;
          else zeros++;
        } else if (d !== 0x2e) break;
        if (++i >= n) break;
        d = buf[i];
      }
      if (significant > 15 || zeros > 300 || d === 0x65 || d === 0x45) inexact = true; // 0x65, 0x45: an exponent
      i--; // the byte after the number is read as any other
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw refuse(`objects and arrays nest deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return inexact;
}

/** Throws (a 400 with a reason) when the raw body nests objects and arrays deeper than `max`. */
export function checkJsonDepth(buf: Buffer, max = MAX_JSON_DEPTH): void {
  scanJsonBody(buf, max);
}
