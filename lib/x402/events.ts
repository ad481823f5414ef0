/**
 * The merchant's `x402.settled` event: an x402 payment settled on chain into one of its wallets (a redeemed
 * challenge, or a payment this service settled as its facilitator). Same outbox, signature, retries and
 * events API as session and payout events; added to the write that credits the wallet, so it exists
 * exactly when the credit does.
 */
import { toApiNumber } from '../core/money.ts';
import type { WriteOp } from '../store/port.ts';
import { eventRowOp } from '../webhooks/event.ts';

export interface X402SettledEventBody {
  event_type: 'x402.settled';
  challenge_id: string;
  status: 'settled';
  /** token units as a JSON number (like session events); amount_subunits is exact */
  amount: number;
  amount_subunits: string;
  currency: string;
  chain: string;
  network: string;
  wallet_id: string;
  resource: string;
  payer: string;
  tx_hash: string | null;
  /** unix seconds carried as a string */
  timestamp: string;
}

export function settledEventOp(
  c: {
    id: string;
    merchant_id: string;
    wallet_id: string;
    amount_subunits: string;
    decimals: number;
    token: string;
    chain: string;
    network: string;
    resource: string;
  },
  r: { payer: string; tx_hash: string | null },
  now: Date,
): WriteOp {
  const body: X402SettledEventBody = {
    event_type: 'x402.settled',
    challenge_id: c.id,
    status: 'settled',
    amount: toApiNumber(c.amount_subunits, c.decimals),
    amount_subunits: c.amount_subunits,
    currency: c.token,
    chain: c.chain,
    network: c.network,
    wallet_id: c.wallet_id,
    resource: c.resource,
    payer: r.payer,
    tx_hash: r.tx_hash,
    timestamp: String(Math.floor(now.getTime() / 1000)),
  };
  return eventRowOp(c.merchant_id, { challenge_id: c.id }, body, now);
}
