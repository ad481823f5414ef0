/**
 * The registration trust gate: an email passes when the address is on the trusted email allowlist or
 * its domain on the trusted domain allowlist. Both live in the store (operators change them without a
 * restart) and are seeded from TRUSTED_EMAILS and TRUSTED_EMAIL_DOMAINS at start.
 */
import type { Config } from '../../config/index.ts';
import type { Store } from '../store/port.ts';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();
export const emailDomain = (email: string) => normalizeEmail(email).split('@').pop() ?? '';

export async function isTrusted(store: Store, email: string): Promise<boolean> {
  const e = normalizeEmail(email);
  if (await store.get('trusted_emails', e)) return true;
  return (await store.get('trusted_domains', emailDomain(e))) !== null;
}

export async function seedTrust(store: Store, config: Config): Promise<void> {
  const now = new Date().toISOString();
  const ops = [
    ...config.trustedEmails.map((id) => ({ op: 'upsert' as const, coll: 'trusted_emails', doc: { id, source: 'env', created_at: now } })),
    ...config.trustedEmailDomains.map((id) => ({
      op: 'upsert' as const,
      coll: 'trusted_domains',
      doc: { id, source: 'env', created_at: now },
    })),
  ];
  for (const op of ops) {
    if (!(await store.get(op.coll, op.doc.id))) await store.write([op]);
  }
}
