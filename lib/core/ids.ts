/** Prefixed, sortable, unguessable identifiers: <prefix>_<10 chars time><3 chars sequence><13 chars random>, Crockford base32. */
import { randomBytes, randomFillSync } from 'node:crypto';

/**
 * Every id prefix in one registry, so a prefix is never used for two nouns and a reader can tell what
 * an id names. A new noun adds its line here (newId refuses an unregistered prefix at compile time).
 */
export const ID_PREFIXES = {
  ps: 'payment session',
  mer: 'merchant',
  ri: 'registration intent',
  pow: 'proof-of-work challenge',
  aud: 'audit event',
  mail: 'outgoing verification mail (outbox row)',
  evt: 'webhook event',
  store: 'catalog store',
  prod: 'catalog product',
  plan: 'catalog plan',
  price: 'catalog price',
  cref: 'checkout reference',
  wal: 'wallet',
  po: 'payout',
  re: 'refund of a payment session',
  swp: 'settlement sweep',
  alt: 'operational alert',
  ald: 'alert delivery (outbox row)',
  owe: 'alert window event (one counted event of a sliding window)',
  drp: 'testnet faucet drip',
  pol: 'agent spend policy (one version)',
  sa: 'agent spend attempt',
  xch: 'x402 payment challenge',
  req: 'HTTP request (its X-Request-Id)',
  rcr: 'reconciliation run',
  drf: 'reconciliation drift on record (drf_ + a hash of its place, not made by newId)',
} as const;

export type IdPrefix = keyof typeof ID_PREFIXES;

const ID_SHAPE = /^([a-z]{2,8})_[0-9a-z]{26}$/;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * After the 10 time characters: 3 characters of a sequence within the millisecond (it starts at a random
 * value below 2^14, so an id does not tell how many were made before it), then 13 characters (65 bits) of
 * fresh randomness in every id. Ids of one process sort in creation order; knowing one id does not help
 * to guess the next one made in the same millisecond.
 */
const SEQ_CHARS = 3;
const SEQ_MAX = 32 ** SEQ_CHARS - 1;
const RANDOM_CHARS = 13;
let lastMs = -1;
let seq = 0;

/** random bytes drawn in bulk: one call to the generator per 256 ids */
const pool = Buffer.alloc(RANDOM_CHARS * 256 + 2);
let poolAt = pool.length;
function randomByte(): number {
  if (poolAt >= pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** the alphabet's character codes, to map random bytes to characters in place */
const CODES = Buffer.from(ALPHABET, 'latin1');
/** random characters drawn in bulk and mapped once: an id takes its 13 as one slice (one string, no concatenations) */
const chars = Buffer.alloc(RANDOM_CHARS * 256);
let charsAt = chars.length;
function randomChars(): string {
  if (charsAt + RANDOM_CHARS > chars.length) {
    randomFillSync(chars);
    for (let i = 0; i < chars.length; i++) chars[i] = CODES[chars[i] & 31];
    charsAt = 0;
  }
  const at = charsAt;
  charsAt += RANDOM_CHARS;
  return chars.toString('latin1', at, charsAt);
}

/** the time characters of the current millisecond (several ids a millisecond share them) */
let timeText = '';

/** Monotonic within one process: ids made in the same millisecond still sort in creation order. */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = ((randomByte() << 8) | randomByte()) & 0x3fff;
    timeText = encodeTime(lastMs);
  } else if (seq < SEQ_MAX) {
    seq++;
  } else {
    // 2^15 ids in one millisecond (or a clock that went back): borrow the next millisecond
    lastMs++;
    seq = ((randomByte() << 8) | randomByte()) & 0x3fff;
    timeText = encodeTime(lastMs);
  }
  return `${prefix}_${timeText}${ALPHABET[(seq >> 10) & 31]}${ALPHABET[(seq >> 5) & 31]}${ALPHABET[seq & 31]}${randomChars()}`;
}

/** Whether `value` has the shape of an id this module makes with `prefix` (not whether it exists). */
export function isId(value: unknown, prefix: IdPrefix): value is string {
  return typeof value === 'string' && ID_SHAPE.exec(value)?.[1] === prefix;
}

/** The registered prefix of an id, or null when it is not one of ours. */
export function idPrefix(value: string): IdPrefix | null {
  const p = ID_SHAPE.exec(value)?.[1];
  return p !== undefined && Object.hasOwn(ID_PREFIXES, p) ? (p as IdPrefix) : null;
}

/** A random secret of `bytes` bytes in base62-ish (base64url without symbols). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes)
    .toString('base64url')
    .replace(/[-_]/g, '')
    .slice(0, Math.ceil(bytes * 1.3));
}
