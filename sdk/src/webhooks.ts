/**
 * Webhook signatures, scheme v1 (Stripe's, so existing verifiers work):
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret>
 *
 * During a webhook-secret rotation the header carries one v1 per live secret. Runs in Node and in
 * browsers alike (HMAC from @noble/hashes, synchronous); comparison is constant-time.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const EVENT_HEADER = 'X-Service-Event';
export const EVENT_ID_HEADER = 'X-Service-Event-Id';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  'missing_header' | 'malformed_header' | 'missing_secret' | 'timestamp_outside_tolerance' | 'no_matching_signature';

export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

function bytes(raw: string | Uint8Array): Uint8Array {
  if (typeof raw === 'string') return utf8ToBytes(raw);
  if (raw instanceof Uint8Array) return raw;
  throw new TypeError('rawBody must be the raw request body (string or bytes), not a parsed object');
}

/** hex HMAC-SHA256 of "<t>.<raw body>" keyed by one secret. */
export function computeSignature(timestamp: number, rawBody: string | Uint8Array, secret: string): string {
  const body = bytes(rawBody);
  const prefix = utf8ToBytes(`${timestamp}.`);
  const payload = new Uint8Array(prefix.length + body.length);
  payload.set(prefix);
  payload.set(body, prefix.length);
  return bytesToHex(hmac(sha256, utf8ToBytes(secret), payload));
}

/** The header value for a body, one v1 per secret (what the service sends; `payments listen` signs this way). */
export function signatureHeader(
  rawBody: string | Uint8Array,
  secrets: string | readonly string[],
  timestamp = Math.floor(Date.now() / 1000),
): string {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  if (list.length === 0) throw new Error('at least one webhook secret is needed to sign');
  return [`t=${timestamp}`, ...list.map((s) => `v1=${computeSignature(timestamp, rawBody, s)}`)].join(',');
}

/** Parses `t=…,v1=…[,v1=…]`; other schemes are ignored. Null without a timestamp or a v1. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const key = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    if (key === 't') {
      if (!/^\d{1,15}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) signatures.push(value.toLowerCase());
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export interface VerifyOptions {
  /** largest distance between the header's t and now, in seconds (default 300); 0 turns the check off */
  toleranceSeconds?: number;
  /** the clock (tests) */
  now?: Date;
}

/**
 * Returns true when the request is authentic; otherwise throws a WebhookVerificationError whose
 * `reason` says why. Pass the raw body exactly as received (before any JSON parsing) and every secret
 * that may be live (old and new during a rotation).
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeaderValue: string | string[] | null | undefined,
  secrets: string | readonly string[],
  toleranceSeconds: number | VerifyOptions = DEFAULT_TOLERANCE_SECONDS,
): true {
  const opts = typeof toleranceSeconds === 'number' ? { toleranceSeconds } : toleranceSeconds;
  const body = bytes(rawBody);
  const value = Array.isArray(signatureHeaderValue) ? signatureHeaderValue.join(',') : signatureHeaderValue;
  if (!value) throw new WebhookVerificationError('missing_header', 'the X-Service-Signature header is missing');
  const keys = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((s) => typeof s === 'string' && s.length > 0);
  if (keys.length === 0) throw new WebhookVerificationError('missing_secret', 'no webhook secret given to verify with');
  const parsed = parseSignatureHeader(value);
  if (!parsed)
    throw new WebhookVerificationError('malformed_header', 'the X-Service-Signature header must look like t=<unix seconds>,v1=<hex>');
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (tolerance > 0 && Math.abs(now - parsed.timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_outside_tolerance', `the signature timestamp is more than ${tolerance} s away from now`);
  }
  let matched = false;
  for (const key of keys) {
    const expected = computeSignature(parsed.timestamp, body, key);
    // every pair is compared, no early exit
    for (const candidate of parsed.signatures) if (constantTimeEqual(expected, candidate)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', 'no v1 signature matches the body and the webhook secrets');
  return true;
}

/** verifyWebhook as a boolean. */
export function isValidWebhook(...args: Parameters<typeof verifyWebhook>): boolean {
  try {
    return verifyWebhook(...args);
  } catch (e) {
    if (e instanceof WebhookVerificationError) return false;
    throw e;
  }
}
