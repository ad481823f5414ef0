/**
 * Registration proof of work, algorithm sha256-leading-zero-bits-v1: a nonce is valid when
 * SHA-256(challenge + ":" + nonce) starts with at least `difficulty` zero bits.
 */
import { createHash } from 'node:crypto';

export const POW_ALGORITHM = 'sha256-leading-zero-bits-v1';
export const MAX_NONCE_LENGTH = 256;

export function leadingZeroBits(digest: Uint8Array): number {
  let bits = 0;
  for (const byte of digest) {
    if (byte === 0) {
      bits += 8;
      continue;
    }
    return bits + Math.clz32(byte) - 24;
  }
  return bits;
}

export function powBits(challenge: string, nonce: string): number {
  return leadingZeroBits(createHash('sha256').update(`${challenge}:${nonce}`).digest());
}

export function verifyPow(challenge: string, nonce: string, difficulty: number): boolean {
  if (typeof nonce !== 'string' || nonce.length === 0 || nonce.length > MAX_NONCE_LENGTH) return false;
  return powBits(challenge, nonce) >= difficulty;
}

/** Brute-force solver for clients, tests and the demo. */
export function solvePow(challenge: string, difficulty: number): string {
  for (let i = 0; ; i++) {
    const nonce = i.toString(36);
    if (powBits(challenge, nonce) >= difficulty) return nonce;
  }
}
