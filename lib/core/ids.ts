/** Prefixed, sortable, unguessable identifiers: <prefix>_<10 chars time><16 chars random>, Crockford base32. */
import { randomBytes } from 'node:crypto';

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
  swp: 'settlement sweep',
  alt: 'operational alert',
  ald: 'alert delivery (outbox row)',
  owe: 'alert window event (one counted event of a sliding window)',
  drp: 'testnet faucet drip',
  pol: 'agent spend policy (one version)',
  sa: 'agent spend attempt',
  xch: 'x402 payment challenge',
} as const;

export type IdPrefix = keyof typeof ID_PREFIXES;

const ID_SHAPE = /^([a-z]{2,8})_[0-9a-z]{26}$/;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RAND_BITS = 80n; // 16 base32 characters
const RAND_MAX = (1n << RAND_BITS) - 1n;
let lastMs = 0;
let lastRand = 0n;

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRand(r: bigint): string {
  let out = '';
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(r & 31n)] + out;
    r >>= 5n;
  }
  return out;
}

const random = (bytes: number): bigint => BigInt(`0x${randomBytes(bytes).toString('hex')}`);

/**
 * Sortable and unguessable: a new millisecond draws 80 fresh random bits; ids made in the same
 * millisecond still sort in creation order, each a fresh random step of up to 2^40 above the last (a
 * +1 step would make the next id of the same millisecond guessable from the previous one).
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  let rand: bigint;
  if (now <= lastMs) {
    now = lastMs;
    rand = lastRand + 1n + random(5);
    if (rand > RAND_MAX) { // this millisecond is used up: borrow the next one
      now = lastMs + 1;
      rand = random(10) >> 1n; // half the space, so steps fit
    }
  } else {
    rand = random(10);
  }
  lastMs = now;
  lastRand = rand;
  return `${prefix}_${encodeTime(now)}${encodeRand(rand)}`;
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
  return randomBytes(bytes).toString('base64url').replace(/[-_]/g, '').slice(0, Math.ceil(bytes * 1.3));
}
