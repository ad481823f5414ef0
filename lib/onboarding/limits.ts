/**
 * Limits on the public registration steps beyond the per-client rate: per email and per domain (so one
 * inbox cannot be flooded with codes and the trust gate cannot be brute-forced by rotating addresses),
 * and wrong codes per email across intents (so a new intent does not buy five new guesses). Every email
 * is counted the same way before the trust check, so the limits say nothing about trust.
 */
import type { Store } from '../store/port.ts';
import { rateLimited } from '../core/errors.ts';
import { sha256Hex } from '../core/secrets.ts';

export interface RegistrationLimits {
  intentsPerEmailPerHour: number;
  intentsPerDomainPerHour: number;
  wrongCodesPerEmailPerDay: number;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
// counters are keyed by a hash: the store keeps no list of who tried to register
const key = (kind: string, value: string) => `reg:${kind}:${sha256Hex(value).slice(0, 32)}`;
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/** Counts a new intent for this email; refuses past either limit. */
export async function countIntent(store: Store, limits: RegistrationLimits, email: string, now: Date): Promise<void> {
  const [perEmail, perDomain] = await Promise.all([
    store.increment(key('email', email), 1, HOUR, now),
    store.increment(key('domain', domainOf(email)), 1, HOUR, now),
  ]);
  if (perEmail > limits.intentsPerEmailPerHour)
    throw rateLimited('too many verification requests for this email; retry in an hour', {
      remediation: 'Use the code already mailed to you, or wait an hour (REGISTRATION_EMAIL_LIMIT_PER_HOUR).',
    });
  if (perDomain > limits.intentsPerDomainPerHour)
    throw rateLimited('too many verification requests for this email domain; retry later', {
      remediation: 'Wait up to an hour before asking for another code for this domain (REGISTRATION_DOMAIN_LIMIT_PER_HOUR).',
    });
}

/** Whether this email still has wrong guesses left today (read without counting). */
export async function guessesLeft(store: Store, limits: RegistrationLimits, email: string, now: Date): Promise<boolean> {
  return (await store.increment(key('wrong', email), 0, DAY, now)) < limits.wrongCodesPerEmailPerDay;
}

export async function countWrongCode(store: Store, email: string, now: Date): Promise<void> {
  await store.increment(key('wrong', email), 1, DAY, now);
}
