/** Collections of onboarding, merchants and credentials. */
import type { CollectionSpec } from '../port.ts';

export const MERCHANT_COLLECTIONS: CollectionSpec[] = [
  { name: 'merchants', indexes: [{ fields: ['email'] }, { fields: ['owner_user_id'] }] },
  /** id = sha256 of the API key; kind active|previous; a previous key carries expires_at */
  { name: 'api_keys', indexes: [{ fields: ['merchant_id'] }], expiresField: 'expires_at' },
  { name: 'registration_intents', expiresField: 'expires_at' },
  /** sealed verification mail waiting for delivery (lib/onboarding/mail-outbox.ts) */
  { name: 'mail_outbox', indexes: [{ fields: ['status', 'next_attempt_at'] }], expiresField: 'expires_at' },
  { name: 'pow_challenges', indexes: [{ fields: ['intent_id'] }], expiresField: 'expires_at' },
  /** id = <scope>:<sha256 of key>; the replayable outcome of an idempotent request, for 24 h */
  { name: 'idempotency', expiresField: 'expires_at' },
  /** operator-managed: id = the lowercase email or domain */
  { name: 'trusted_emails' },
  { name: 'trusted_domains' },
  /** id = sha256 of the invitation token */
  { name: 'invitations', expiresField: 'expires_at' },
  /** id = sha256 of the bearer token of an operator-created user */
  { name: 'bearer_users', indexes: [{ fields: ['email'] }] },
  /** lib/core/audit.ts; sealed into per-merchant hash chains by lib/ops/audit-chain.ts (chain, seq) */
  {
    name: 'audit_events',
    indexes: [
      { fields: ['type', 'created_at'] },
      { fields: ['merchant_id', 'created_at'] },
      { fields: ['seal_due_at'] },
      { fields: ['chain', 'seq'] },
    ],
  },
  /** id = chain (merchant id or "platform"): the newest sealed row's seq and hash */
  { name: 'audit_heads' },
];
