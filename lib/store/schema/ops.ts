/** Collections of operations: alert windows, alerts and their delivery outbox (lib/ops/alerts). */
import type { CollectionSpec } from '../port.ts';

export const OPS_COLLECTIONS: CollectionSpec[] = [
  /** one row per counted event of a sliding window; purged after the longest window that reads it */
  { name: 'ops_window_events', indexes: [{ fields: ['counter', 'at'] }], expiresField: 'expires_at' },
  /** id = <alert_type>|<key>: the open alert of a key (dedup and re-notification); purged a window after its last crossing */
  { name: 'alert_state', expiresField: 'expires_at' },
  {
    name: 'alerts',
    indexes: [
      { fields: ['created_at'] },
      { fields: ['alert_type', 'created_at'] },
      { fields: ['merchant_id', 'created_at'] },
      // the open alerts of a key, to resolve them
      { fields: ['key', 'status'] },
    ],
  },
  { name: 'alert_deliveries', indexes: [{ fields: ['status', 'next_attempt_at'] }, { fields: ['alert_id'] }] },
];
