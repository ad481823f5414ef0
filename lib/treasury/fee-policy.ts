/**
 * Who pays network fees (docs/money-out.md "Who pays network fees"): one table, the quotes and the
 * true-up, pure. Every path that books a network cost goes through ./fee-booking.ts, which asks this
 * module who pays.
 *
 * - Money leaving the service (payouts, refunds) is the merchant's cost: the wallet's own address pays
 *   the network fee and any token-account rent (it signs as sender and, on Solana, as fee payer), quoted
 *   at acceptance (`fee_subunits`, in the chain's native coin), reserved with the amount, and charged
 *   what the chain took, never less than that.
 * - Money arriving or moving between the service's own addresses (sweeps, custody moves, x402
 *   settlements, faucet drips) is the platform's cost, booked from `sys:gas`. One exception: an ETH
 *   sweep pays its gas out of the swept ETH (the merchant's; a deposit address holds nothing else).
 * - Platform gas parked at a merchant's address (an Ethereum top-up) stays the platform's
 *   (`sys:gas@<address>`), never the merchant's available balance; its leftover is netted against the
 *   next top-up to that address.
 */

export type Movement = 'payout' | 'refund' | 'sweep' | 'custody_move' | 'x402_settlement' | 'faucet_drip';
export type FeePayer = 'merchant' | 'platform';

export const FEE_PAYER: Readonly<Record<Movement, FeePayer>> = {
  payout: 'merchant',
  refund: 'merchant',
  sweep: 'platform',
  custody_move: 'platform',
  x402_settlement: 'platform',
  faucet_drip: 'platform',
};

export const feePayer = (m: Movement): FeePayer => FEE_PAYER[m];

/** Solana's base fee per signature; the service pays no priority fee */
export const LAMPORTS_PER_SIGNATURE = 5_000n;
/** bytes of an SPL token account: its rent-exempt minimum is what creating one locks (2,039,280 lamports) */
export const TOKEN_ACCOUNT_SIZE = 165;
/** gas limit used when the node cannot estimate an ERC-20 transfer (the sender does not hold the tokens yet) */
export const ERC20_TRANSFER_GAS = 100_000n;

/** A network-fee quote in the chain's native smallest unit. */
export interface FeeQuote {
  /** what is reserved and shown: network fee + rent */
  fee_subunits: bigint;
  network_fee: bigint;
  rent: bigint;
  /** Ethereum: the gas the transaction is pinned to, so the fee cannot exceed the quote */
  gas_limit?: bigint;
  gas_price?: bigint;
}

export function ethereumQuote(gasLimit: bigint, gasPrice: bigint): FeeQuote {
  const fee = gasLimit * gasPrice;
  return { fee_subunits: fee, network_fee: fee, rent: 0n, gas_limit: gasLimit, gas_price: gasPrice };
}

/** `newTokenAccountRent`: the rent-exempt minimum of the token account the transaction creates, or 0 */
export function solanaQuote(signatures: number, newTokenAccountRent: bigint): FeeQuote {
  const fee = LAMPORTS_PER_SIGNATURE * BigInt(signatures);
  return { fee_subunits: fee + newTokenAccountRent, network_fee: fee, rent: newTokenAccountRent };
}

/**
 * What a merchant-paid movement is charged when final: exactly what the chain took (`paid`, fee + rent),
 * never less. The reservation covers it up to the quote, and the chain cannot take more: a pinned
 * Ethereum transaction is never replaced at a higher price (TxDriver.replaceable), a Solana payout
 * creates no token account whose rent was not reserved. Should it all the same (a defect), the excess is
 * charged from what the wallet has available beyond the reservation; whatever the wallet cannot cover
 * came out of platform gas parked at its address (`uncovered`, booked as the platform's, and reported by
 * reconciliation when it drives that parked gas below zero).
 */
export function trueUp(
  reserved: bigint,
  paid: bigint,
  availableBeyond: bigint,
): { charged: bigint; fromReservation: bigint; beyondQuote: bigint; uncovered: bigint } {
  if (paid < 0n || reserved < 0n) throw new RangeError('fees are never negative');
  const fromReservation = paid < reserved ? paid : reserved;
  const over = paid - fromReservation;
  const room = availableBeyond > 0n ? availableBeyond : 0n;
  const beyondQuote = over < room ? over : room;
  return { charged: fromReservation + beyondQuote, fromReservation, beyondQuote, uncovered: over - beyondQuote };
}
