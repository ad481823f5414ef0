/**
 * The audit rows of a payout: `payout.created` when it is accepted, `payout.completed` or `payout.failed`
 * when it ends, each in the same write as the change (lib/core/audit.ts). Ids, rail, amount and outcome
 * only: never a key or a signed transaction.
 */
import { auditOp } from '../core/audit.ts';
import type { WriteOp } from '../store/port.ts';
import type { PayoutDoc } from './model.ts';

export function payoutAuditOp(event: 'created' | 'completed' | 'failed', p: PayoutDoc, at: Date | string): WriteOp {
  return auditOp(
    `payout.${event}`,
    {
      merchant_id: p.merchant_id,
      payout_id: p.id,
      wallet_id: p.wallet_id,
      chain: p.chain,
      network: p.network,
      token: p.token,
      amount_subunits: p.amount_subunits,
      execution: p.execution,
      status: p.status,
      ...(p.tx_hash ? { tx_hash: p.tx_hash } : {}),
      ...(p.failure_reason ? { failure_reason: p.failure_reason } : {}),
    },
    at,
  );
}
