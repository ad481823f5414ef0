/**
 * Merchant-facing verification of a webhook request (scheme v1, see signature.ts):
 *
 *   import { verifyWebhook } from './lib/webhooks/verify.ts';
 *   verifyWebhook(rawBody, req.headers['x-service-signature'], process.env.WEBHOOK_SECRET); // throws if bad
 *
 * Pass the raw request body exactly as received (the bytes, before any JSON parsing). The timestamp must
 * be within `toleranceSeconds` (default 300) of `now`, in either direction; any v1 signature in the
 * header may match (there are several during a secret rotation). Comparison is constant-time.
 */
import { timingSafeEqual } from 'node:crypto';
import { computeSignature, parseSignatureHeader } from './signature.ts';

export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  | 'missing_header'
  | 'malformed_header'
  | 'missing_secret'
  | 'timestamp_outside_tolerance'
  | 'no_matching_signature';

export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

export interface VerifyOptions {
  /** largest accepted distance between the header's t and now, in seconds; 0 turns the check off */
  toleranceSeconds?: number;
  /** the clock (tests) */
  now?: Date;
}

function bodyBytes(rawBody: string | Uint8Array): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('rawBody must be the raw request body (string or bytes), not a parsed object');
}

/**
 * Returns true when the request is authentic; otherwise throws a WebhookVerificationError whose
 * `reason` says why. `secret` may be a list (e.g. your old and new secret while you switch over).
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string | readonly string[],
  opts: VerifyOptions = {},
): true {
  const body = bodyBytes(rawBody);
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) throw new WebhookVerificationError('missing_header', 'the X-Service-Signature header is missing');
  const secrets = (Array.isArray(secret) ? secret : [secret]).filter((s): s is string => typeof s === 'string' && s.length > 0);
  if (secrets.length === 0) throw new WebhookVerificationError('missing_secret', 'no webhook secret given to verify with');
  const parsed = parseSignatureHeader(value);
  if (!parsed) throw new WebhookVerificationError('malformed_header', 'the X-Service-Signature header must look like t=<unix seconds>,v1=<hex>');
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (tolerance > 0 && Math.abs(nowSeconds - parsed.timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_outside_tolerance', `the signature timestamp is more than ${tolerance} s away from now`);
  }
  let matched = false;
  for (const s of secrets) {
    const expected = Buffer.from(computeSignature(parsed.timestamp, body, s), 'utf8');
    for (const candidate of parsed.signatures) {
      // every pair is compared (no early exit), in constant time; lengths are equal (64 hex chars)
      if (timingSafeEqual(expected, Buffer.from(candidate, 'utf8'))) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no v1 signature matches the body and the webhook secret');
  return true;
}

/** The same check as verifyWebhook, as a boolean. */
export function isValidWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string | readonly string[],
  opts: VerifyOptions = {},
): boolean {
  try {
    return verifyWebhook(rawBody, header, secret, opts);
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
}
