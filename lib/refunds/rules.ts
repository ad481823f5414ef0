/**
 * How much of a session can be refunded, and from which money: pure decisions over what the session
 * received (its counted deposits) and what its refunds already took (`refund_totals`: every refund not
 * failed, pending ones included). Property-tested: whatever the interleaving, refunded ≤ received.
 *
 * - Left to refund = received − refunded (never below zero: a reorg may take back a deposit that was
 *   already refunded; then nothing more is refundable).
 * - Without an amount: an overpaid session refunds its excess (what was not refunded of it yet), any
 *   other, or one whose excess is refunded, everything left.
 * - One refund draws on one kind of money: what arrived on chain (sent back on chain) or, in sandbox,
 *   simulated money (a simulated refund, nothing broadcast). A refund larger than either alone but
 *   within their sum is refused with the largest single refund possible.
 */
import type { PaymentSessionState } from '../sessions/payment-session.ts';
import type { RefundTotalsDoc } from './model.ts';

export interface RefundBasis {
  expected: bigint;
  /** counted, not reverted deposits that arrived on chain */
  receivedChain: bigint;
  /** counted simulated deposits (sandbox) */
  receivedSimulated: bigint;
  refundedChain: bigint;
  refundedSimulated: bigint;
}

export function basisOf(
  s: Pick<PaymentSessionState, 'expected_subunits' | 'deposits'>,
  totals: Pick<RefundTotalsDoc, 'chain_subunits' | 'simulated_subunits'> | null,
): RefundBasis {
  let chain = 0n;
  let simulated = 0n;
  for (const d of s.deposits) {
    if (!d.counted || d.reverted) continue;
    if (d.simulated) simulated += BigInt(d.amount_subunits);
    else chain += BigInt(d.amount_subunits);
  }
  return {
    expected: BigInt(s.expected_subunits),
    receivedChain: chain,
    receivedSimulated: simulated,
    refundedChain: BigInt(totals?.chain_subunits ?? '0'),
    refundedSimulated: BigInt(totals?.simulated_subunits ?? '0'),
  };
}

const pos = (n: bigint) => (n > 0n ? n : 0n);
export const receivedOf = (b: RefundBasis) => b.receivedChain + b.receivedSimulated;
export const refundedOf = (b: RefundBasis) => b.refundedChain + b.refundedSimulated;
/** what may still be refunded, in all */
export const leftOf = (b: RefundBasis) => pos(receivedOf(b) - refundedOf(b));

/** The amount of a refund sent without one: the overpaid excess not yet refunded, else everything left. */
export function defaultAmount(b: RefundBasis): bigint {
  const excess = receivedOf(b) - b.expected;
  const refunded = refundedOf(b);
  if (excess > 0n && refunded < excess) return excess - refunded;
  return leftOf(b);
}

export type RefundDecision =
  | { ok: true; amount: bigint; simulated: boolean }
  | {
      ok: false;
      /** nothing_received: no money arrived; nothing_left: all of it is refunded or on its way; exceeds: more than is left; one_source: within the rest, but more than one kind of money holds */
      reason: 'nothing_received' | 'nothing_left' | 'exceeds' | 'one_source';
      left: bigint;
      /** the largest refund possible now */
      largest: bigint;
    };

export function decideRefund(b: RefundBasis, requested: bigint | null): RefundDecision {
  const left = leftOf(b);
  const chainLeft = pos(b.receivedChain - b.refundedChain);
  const simLeft = pos(b.receivedSimulated - b.refundedSimulated);
  // one refund draws on one kind of money, and never on more than is left in all (after a reorg)
  const single = chainLeft > simLeft ? chainLeft : simLeft;
  const largest = single < left ? single : left;
  const refuse = (reason: 'nothing_received' | 'nothing_left' | 'exceeds' | 'one_source') =>
    ({ ok: false, reason, left, largest }) as const;
  if (receivedOf(b) === 0n) return refuse('nothing_received');
  if (left === 0n) return refuse('nothing_left');
  const amount = requested ?? defaultAmount(b);
  if (amount <= 0n) throw new RangeError('a refund amount is positive');
  if (amount > left) return refuse('exceeds');
  if (amount <= chainLeft) return { ok: true, amount, simulated: false };
  if (amount <= simLeft) return { ok: true, amount, simulated: true };
  return refuse('one_source');
}
