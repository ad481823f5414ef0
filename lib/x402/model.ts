/**
 * The stored x402 records: a challenge (what a payment must be to buy a resource), a redemption (the one
 * payment of a challenge, with its proof's replay key, ./replay.ts), and what a redeem answers.
 */
import type { SessionQuote } from '../rates/quote.ts';
import type { Doc } from '../store/port.ts';
import type { ChallengeTerms, Eip3009Authorization, Proof } from './proof.ts';
import type { SettleResponse } from './wire.ts';

export const CHALLENGES = 'x402_challenges';
export const REDEMPTIONS = 'x402_redemptions';
/** id = a challenge id: the one payment of it, whichever kind (`attempt_id` of an agent spend, or `proof_key`) */
export const CHALLENGE_PAYMENTS = 'x402_agent_payments';

/** The one payment of a challenge: an agent spend's, or an on-chain proof's (`proof_key`, no attempt). */
export interface ChallengePaymentDoc extends Doc {
  attempt_id: string | null;
  agent_wallet_id?: string;
  /**
   * An agent spend's request hash: an x402 spend's reference is its challenge id, so this row is also the
   * idempotency record of that reference (lib/agents/attempt.ts); absent on rows written before it was.
   */
  request_hash?: string | null;
  proof_key?: string;
  created_at: string;
}

export interface ChallengeDoc extends Doc, ChallengeTerms {
  merchant_id: string;
  wallet_id: string;
  decimals: number;
  resource: string;
  description: string | null;
  price_id: string | null;
  /** a catalog price in fiat: the quote amount_subunits was converted at (lib/rates/quote.ts) */
  quote?: SessionQuote;
  /** `redeemed` once an on-chain settlement of it is final; an agent-wallet redeem leaves it `open`: its settled redemption (same id) redeemed it */
  status: 'open' | 'redeemed';
  /** the CAIP-2 id it is offered under on the x402 v2 wire (null: not payable there) */
  x402_network?: string | null;
  /** `facilitator`: made by POST /v1/x402/facilitator/settle for a payment a resource server was handed */
  source?: 'challenge' | 'facilitator';
  expires_at: string;
  created_at: string;
  redeemed_at: string | null;
}

export interface RedemptionDoc extends Doc {
  merchant_id: string;
  proof_key: string;
  proof_hash: string;
  kind: Proof['kind'];
  payer: string;
  chain: string;
  network: string;
  status: 'settling' | 'settled' | 'failed';
  /** the resource was answered for this payment (once) */
  served: boolean;
  /** the outbox row carrying the settlement (on-chain proofs) */
  chain_tx_id: string | null;
  tx_hash: string | null;
  spend_attempt_id: string | null;
  /** EIP-3009: the authorization, so a front-run of it can be recognised on chain */
  authorization?: Eip3009Authorization | null;
  next_check_at: string | null;
  failure_reason: string | null;
  created_at: string;
  settled_at: string | null;
}

export interface RedeemResult {
  challenge_id: string;
  status: 'settled' | 'pending';
  payer: string;
  amount_subunits: string;
  tx_hash?: string;
  settled_at: string | null;
  /** the x402 v2 SettleResponse (plus challenge_id, status and chain) */
  settle_response: SettleResponse & { challenge_id: string; status: 'settled' | 'pending'; chain: string };
  /** its base64 JSON, for the PAYMENT-RESPONSE header */
  payment_response: string;
}
