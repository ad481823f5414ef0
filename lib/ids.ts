/** Prefixed, sortable, unguessable identifiers: <prefix>_<10 chars time><16 chars random>, Crockford base32. */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let lastMs = 0;
let lastRand: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** Monotonic within one process: ids made in the same millisecond still sort in creation order. */
export function newId(prefix: string, now = Date.now()): string {
  let rand: number[];
  if (now <= lastMs) {
    now = lastMs;
    rand = lastRand.slice();
    for (let i = rand.length - 1; i >= 0; i--) {
      if (rand[i] < 31) { rand[i]++; break; }
      rand[i] = 0;
    }
  } else {
    const bytes = randomBytes(16);
    rand = Array.from(bytes, (b) => b & 31);
  }
  lastMs = now;
  lastRand = rand;
  return `${prefix}_${encodeTime(now)}${rand.map((r) => ALPHABET[r]).join('')}`;
}

/** A random secret of `bytes` bytes in base62-ish (base64url without symbols). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url').replace(/[-_]/g, '').slice(0, Math.ceil(bytes * 1.3));
}
