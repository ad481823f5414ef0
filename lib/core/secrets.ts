/** Hashing and comparison of secrets (API keys, codes, tokens): stored hashed, compared in constant time. */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';

/** one-shot: no Hash object per call (every authenticated request hashes its API key) */
export function sha256Hex(input: string | Buffer): string {
  return hash('sha256', input, 'hex');
}

export function hmacHex(key: string | Buffer, input: string | Buffer): string {
  return createHmac('sha256', key).update(input).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab); // spend comparable time either way
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** Keeps the first characters of a secret for logs and support, never the rest. */
export function redact(secret: string, keep = 12): string {
  return secret.length <= keep ? '***' : `${secret.slice(0, keep)}…`;
}
