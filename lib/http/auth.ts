/**
 * Credentials: API keys (service_sk_test_… / service_sk_live_…) and operator-issued bearer tokens are
 * high-entropy secrets, stored only as SHA-256 hashes and found by that hash; the stored hash is then
 * compared in constant time.
 */
import { randomToken } from '../core/ids.ts';
import { constantTimeEqual, sha256Hex } from '../core/secrets.ts';
import type { Doc, Store } from '../store/port.ts';

export interface ApiKeyDoc extends Doc {
  merchant_id: string;
  kind: 'active' | 'previous';
  prefix: string;
  created_at: string;
  /** set on a previous key: the end of the rotation overlap */
  expires_at: string | null;
}

export interface BearerUserDoc extends Doc {
  email: string;
  name: string;
  created_at: string;
}

export const API_KEY_PATTERN = /^service_sk_(test|live)_[A-Za-z0-9]{20,100}$/;

export function newApiKey(sandbox: boolean): string {
  return `service_sk_${sandbox ? 'test' : 'live'}_${randomToken(32)}`;
}

export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

export const keyHash = (secret: string) => sha256Hex(secret);

export async function resolveApiKey(store: Store, key: string | undefined, now = new Date()): Promise<ApiKeyDoc | null> {
  if (!key || !API_KEY_PATTERN.test(key)) return null;
  const hash = keyHash(key);
  const doc = await store.get<ApiKeyDoc>('api_keys', hash);
  if (!doc || !constantTimeEqual(doc.id, hash)) return null;
  if (doc.expires_at && doc.expires_at <= now.toISOString()) return null;
  return doc;
}

export async function resolveBearer(store: Store, header: string | undefined): Promise<BearerUserDoc | null> {
  const m = /^Bearer\s+([A-Za-z0-9._~+/=-]{16,200})$/.exec(header ?? '');
  if (!m) return null;
  const hash = keyHash(m[1]);
  const doc = await store.get<BearerUserDoc>('bearer_users', hash);
  if (!doc || !constantTimeEqual(doc.id, hash)) return null;
  return doc;
}
