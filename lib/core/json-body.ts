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

/** Throws (a 400 with a reason) when the raw body nests objects and arrays deeper than `max`. */
export function checkJsonDepth(buf: Buffer, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw refuse(`objects and arrays nest deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}
