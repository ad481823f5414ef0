/** Collections of refunds (lib/refunds/model.ts). */
import type { CollectionSpec } from '../port.ts';

export const REFUNDS_COLLECTIONS: CollectionSpec[] = [
  /** one per refund (id re_…); executed on chain by the payout executor like a payout */
  {
    name: 'refunds',
    indexes: [
      { fields: ['session_id', 'id'] },
      { fields: ['merchant_id', 'id'] },
      { fields: ['status', 'execution', 'next_attempt_at'] },
      { fields: ['next_attempt_at'] },
    ],
  },
  /** id = the session id: what its refunds took (not failed), compare-and-set with every acceptance */
  { name: 'refund_totals' },
];
