/** GET /v1/payment_sessions: a merchant's sessions, newest first (ids are time-sortable), by status, cursor paging. */
import type { Filter, Store } from '../store/port.ts';
import { invalidCursor, invalidLimit } from '../core/errors.ts';
import { decodeCursor, encodeCursor, parseLimit } from '../catalog/rules.ts';
import type { PaymentSessionState } from './payment-session.ts';
import type { Checked } from '../http/contract.ts';

export type SessionListQuery = Checked<'PaymentSessionListQuery'>;

export async function listSessions(
  store: Store,
  merchantId: string,
  query: SessionListQuery,
): Promise<{ rows: PaymentSessionState[]; has_more: boolean; next_cursor: string | null }> {
  const limit = parseLimit(query.limit);
  if (typeof limit === 'string') throw invalidLimit(limit);
  const filter: Filter = { merchant_id: merchantId };
  if (query.status) filter.status = query.status;
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor);
    if (!after) throw invalidCursor();
    filter.id = { $lt: after };
  }
  const rows = await store.find<PaymentSessionState>('payment_sessions', filter, { desc: true, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  return { rows: page, has_more: more, next_cursor: more ? encodeCursor(page[page.length - 1].id) : null };
}
