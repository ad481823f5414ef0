/** Collections of webhook delivery. */
import type { CollectionSpec } from '../port.ts';

export const WEBHOOKS_COLLECTIONS: CollectionSpec[] = [
  { name: 'webhook_events', indexes: [{ fields: ['status', 'next_attempt_at'] }, { fields: ['session_id', 'created_at'] }, { fields: ['merchant_id', 'created_at'] }] },
];
