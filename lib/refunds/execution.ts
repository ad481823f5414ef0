/**
 * Refunds as a kind of money out for the payout executor (lib/treasury/payout-executor.ts): their
 * collection, outbox purpose `refund` (rows `refund:<refund id>`), the ledger references of their network
 * cost, and what ends one: `refund.completed` or `refund.failed` with its audit row, and on failure the
 * session's refund totals lowered by the amount (in the same final write), so it can be refunded again.
 */
import type { Store, WriteOp } from '../store/port.ts';
import type { OutgoingKind } from '../treasury/payout-executor.ts';
import { REFUNDS, REFUND_TOTALS, refundAuditOp, refundEventOp, totalsOp, type RefundDoc, type RefundTotalsDoc } from './model.ts';

export function refundKind(store: Store): OutgoingKind<RefundDoc> {
  return {
    movement: 'refund',
    coll: REFUNDS,
    refs: (r) => ({ refund_id: r.id, session_id: r.session_id }),
    async endOps(r, amount, now) {
      const ops: WriteOp[] = [refundEventOp(r, amount, now), refundAuditOp(r.status === 'completed' ? 'completed' : 'failed', r, now)];
      if (r.status === 'failed') {
        const totals = await store.get<RefundTotalsDoc>(REFUND_TOTALS, r.session_id);
        ops.push(totalsOp(totals, r, -1n, now.toISOString()));
      }
      return ops;
    },
  };
}
