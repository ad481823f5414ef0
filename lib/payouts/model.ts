/**
 * Payouts: money leaving a wallet. The payout's ledger transfer has the payout's id, so accepting,
 * completing and failing it are each one atomic write with the ledger change.
 * Status only moves forward: pending → processing → completed | failed (pending may fail directly).
 */
import type { Doc, WriteOp } from '../store/port.ts';
import { eventRowOp } from '../webhooks/event.ts';

export const PAYOUTS = 'payouts';
export type PayoutStatus = 'pending' | 'processing' | 'completed' | 'failed';
/**
 * How a payout is carried out:
 * - `chain`: a real on-chain transfer; the chain executor (lib/chains, engineer payouts-chain) claims
 *   `status: 'pending', execution: 'chain'` rows whose `next_attempt_at` is due, and posts/voids the
 *   pending transfer (id = payout id) in the same write as the status change;
 * - `ledger`: the destination is one of this service's wallets; completed at once inside the ledger;
 * - `simulated`: sandbox money with no chain behind it; completed at once, never broadcast.
 */
export type PayoutExecution = 'chain' | 'ledger' | 'simulated';

export const PAYOUT_TRANSITIONS: Record<PayoutStatus, PayoutStatus[]> = {
  pending: ['processing', 'completed', 'failed'],
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
};
export const canMove = (from: PayoutStatus, to: PayoutStatus) => PAYOUT_TRANSITIONS[from].includes(to);

export interface PayoutDoc extends Doc {
  id: string;
  merchant_id: string;
  wallet_id: string;
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  token: string;
  /** the rail key, the ledger asset */
  asset: string;
  /** smallest units, digit string */
  amount_subunits: string;
  destination: string;
  /** the wallet the destination belongs to, when it is one of ours */
  destination_wallet_id: string | null;
  status: PayoutStatus;
  execution: PayoutExecution;
  simulated: boolean;
  tx_hash: string | null;
  /**
   * the network fee and token-account rent in the chain's native coin (lib/treasury/fee-policy.ts): the
   * quote reserved at acceptance until the payout is final, then what was charged ("0" inside the ledger)
   */
  fee_subunits: string | null;
  /** the quote behind the reservation (`feeres:<payout id>`); the transaction is pinned to its gas */
  fee_quote?: { fee_subunits: string; rent_subunits: string; gas_limit: string | null; gas_price: string | null } | null;
  /** why an accepted payout is not on its way yet (gas_wallet_empty, custody_move_pending, …); null otherwise */
  waiting_reason?: string | null;
  failure_reason: string | null;
  metadata: Record<string, unknown> | null;
  /** when the executor should look at it next (chain payouts) */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  version?: number;
}

export type PayoutEventType = 'payout.completed' | 'payout.failed';

/** The webhook body of a payout event (issue 9). */
export interface PayoutEventBody {
  event_type: PayoutEventType;
  payout_id: string;
  status: PayoutStatus;
  /** token units as a JSON number (like session events) */
  amount: number;
  currency: string;
  chain: string;
  network: string;
  /** unix seconds carried as a string */
  timestamp: string;
  tx_hash: string | null;
}

/**
 * The outbox row of a payout event: same collection, signature and retries as session events. Add it to
 * the write that moves the payout to `completed` or `failed`.
 */
export function payoutEventOp(
  p: Pick<PayoutDoc, 'id' | 'merchant_id' | 'status' | 'token' | 'chain' | 'network' | 'tx_hash'>,
  amount: number,
  now: Date,
): WriteOp {
  const event_type: PayoutEventType = p.status === 'completed' ? 'payout.completed' : 'payout.failed';
  if (p.status !== 'completed' && p.status !== 'failed')
    throw new Error(`payout ${p.id} is ${p.status}: only completed or failed payouts have events`);
  const body: PayoutEventBody = {
    event_type,
    payout_id: p.id,
    status: p.status,
    amount,
    currency: p.token,
    chain: p.chain,
    network: p.network,
    timestamp: String(Math.floor(now.getTime() / 1000)),
    tx_hash: p.tx_hash,
  };
  return eventRowOp(p.merchant_id, { payout_id: p.id }, body, now);
}
