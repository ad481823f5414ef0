/** Collections of webhook delivery. */
import type { CollectionSpec } from '../port.ts';

export const WEBHOOKS_COLLECTIONS: CollectionSpec[] = [
  {
    name: 'webhook_events',
    indexes: [
      { fields: ['status', 'next_attempt_at'] },
      { fields: ['session_id', 'created_at'] },
      { fields: ['merchant_id', 'created_at'] },
      // the events API: newest-first pages, the sequencer's unstamped rows, a merchant's stream
      { fields: ['merchant_id', 'id'] },
      { fields: ['stream_seq'] },
      { fields: ['merchant_id', 'stream_seq'] },
    ],
  },
  /** the event stream's counter (lib/events/feed.ts) */
  { name: 'event_sequence' },
];
