/**
 * The webhook signature (scheme v1, the one Stripe uses, so existing verifiers work):
 *
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by webhook_secret>
 *
 * `t` is the time of the delivery attempt (not of the event), so a receiver's tolerance window applies
 * to each attempt, retries included. During a webhook-secret rotation overlap the header carries one
 * v1= entry per live secret (newest first); a receiver accepts the request when any entry matches.
 */
import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Service-Signature';
export const EVENT_HEADER = 'X-Service-Event';
export const EVENT_ID_HEADER = 'X-Service-Event-Id';
export const SIGNATURE_SCHEME = 'v1';

/** The exact string that is signed: the timestamp, a dot, the raw body bytes. */
export function signedPayload(timestamp: number, rawBody: string | Buffer): Buffer {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), body]);
}

/** hex HMAC-SHA256 of "<t>.<raw body>" keyed by one secret. */
export function computeSignature(timestamp: number, rawBody: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(signedPayload(timestamp, rawBody)).digest('hex');
}

/**
 * The header value for a body: `t=<t>,v1=<sig>[,v1=<sig>…]`, one v1 per secret, in the given order.
 * `timestamp` is unix seconds.
 */
export function signatureHeader(rawBody: string | Buffer, secrets: readonly string[], timestamp: number): string {
  if (secrets.length === 0) throw new Error('at least one webhook secret is needed to sign');
  if (!Number.isInteger(timestamp) || timestamp < 0) throw new Error('the signature timestamp must be unix seconds');
  return [`t=${timestamp}`, ...secrets.map((s) => `${SIGNATURE_SCHEME}=${computeSignature(timestamp, rawBody, s)}`)].join(',');
}

export interface ParsedSignature {
  timestamp: number;
  /** every v1 signature, lower-case hex */
  signatures: string[];
}

/**
 * Parses a header value; unknown schemes (e.g. a future v2) are ignored. Returns null when there is no
 * timestamp or no v1 signature.
 */
export function parseSignatureHeader(header: string): ParsedSignature | null {
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
    } else if (key === SIGNATURE_SCHEME && /^[0-9a-fA-F]{64}$/.test(value)) {
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}
