/** GET /v1/payment_sessions: a merchant's sessions, newest first (ids are time-sortable), by status, cursor paging. */
import type { Filter, Store } from '../store/port.ts';
import { pageById, type Page } from '../core/paging.ts';
import type { PaymentSessionState } from './payment-session.ts';
import type { Checked } from '../http/contract.ts';

export type SessionListQuery = Checked<'PaymentSessionListQuery'>;

export function listSessions(store: Store, merchantId: string, query: SessionListQuery): Promise<Page<PaymentSessionState>> {
  const filter: Filter = { merchant_id: merchantId };
  if (query.status) filter.status = query.status;
  return pageById<PaymentSessionState, PaymentSessionState>(store, 'payment_sessions', filter, query, (s) => s);
}
