/**
 * Spend attempts: the stored record, how its execution is chosen, and how the API shows it.
 * Status (the spec's three): pending (allowed; a pending ledger transfer reserves the amount),
 * approval_required (reserves nothing), denied (no ledger row). Transitions after creation (additive):
 * approval_required → pending | denied (approve re-evaluates the caps; deny by the merchant).
 * A pending attempt is executed (additive `settlement`): inside the ledger at once when the target is one
 * of this service's wallets or an x402 challenge's payTo, or as an on-chain payout of the agent wallet.
 */
import type { PayoutLimits } from '../payouts/limits.ts';
import type { Doc } from '../store/port.ts';
import { toApiNumber } from '../core/money.ts';
import type { Evaluation, Reason } from './policy.ts';

export type AttemptStatus = 'pending' | 'approval_required' | 'denied';
/** where the money goes: one of our wallets, an x402 challenge's merchant wallet, or an address on chain */
export type TargetKind = 'wallet' | 'x402' | 'chain';
export type Execution = 'ledger' | 'chain' | 'simulated';
/** decisions made outside the policy rules */
/** `challenge_closed`: the x402 challenge it pays expired, was redeemed or was paid by another attempt (paying would buy nothing) */
export type ExtraReason =
  | 'insufficient_funds'
  | 'denied_by_merchant'
  | 'challenge_closed'
  /** an on-chain spend is a payout: PAYOUT_AMOUNT_LIMIT and DAILY_PAYOUT_LIMIT bind it too (lib/payouts/limits.ts) */
  | 'payout_amount_limit_exceeded'
  | 'daily_payout_limit_exceeded';

export interface Settlement {
  status: 'awaiting_execution' | 'settled' | 'submitted' | 'failed';
  execution: Execution;
  payout_id?: string;
  tx_hash?: string | null;
  settled_at?: string | null;
  failure_reason?: string | null;
}

/** The stored attempt: the request (AttemptInput) and what was decided and done about it. */
export interface SpendAttemptDoc extends Doc, AttemptInput {
  id: string;
  merchant_id: string;
  agent_wallet_id: string;
  status: AttemptStatus;
  reason: Reason | ExtraReason | null;
  policy_id: string | null;
  ledger_entry_id: string | null;
  spend_reference: string | null;
  target_kind: TargetKind;
  target_wallet_id: string | null;
  challenge_id: string | null;
  settlement: Settlement | null;
  /** set while an internal (ledger) execution is still to be done: a scanner finishes it after a crash */
  execute_due_at: string | null;
  /**
   * sha256 of the canonical request, for an attempt with a reference (the same reference with another body
   * is a 409; the reference row holds the hash it is checked against); null without one: nothing compares it
   */
  request_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface WalletFacts {
  id: string;
  merchant_id: string;
  type: string;
  chain: string;
  network: string;
  address: string;
}
export interface AttemptInput {
  target: string;
  amount_subunits: string;
  decimals: number;
  token_symbol: string;
  chain: string;
  network: string;
  api_domain: string | null;
  reference: string | null;
  metadata: Record<string, unknown> | null;
}
/** What the facade found out before asking the actor (reads only). */
export interface AttemptContext {
  caller_merchant_id: string;
  merchant: { sandbox: boolean; kyc_verified: boolean };
  wallet: WalletFacts;
  rail_enabled: boolean;
  /** `closed`: the reference names an x402 challenge that can no longer be paid (expired or redeemed) */
  target: { kind: TargetKind; wallet_id: string | null; challenge_id: string | null; closed?: boolean };
  /** the platform's payout limits and the rail's decimals, for a spend executed on chain as a payout */
  payout_limits?: { limits: PayoutLimits; decimals: number };
}

export const ATTEMPTS = 'spend_attempts';

/** The AgentSpendAttempt as the API shows it: every spec field, plus `settlement` and `trace` when known. */
export function presentAttempt(a: SpendAttemptDoc, extra: { evaluation?: Evaluation } = {}) {
  return {
    id: a.id,
    merchant_id: a.merchant_id,
    agent_wallet_id: a.agent_wallet_id,
    target: a.target,
    amount: toApiNumber(a.amount_subunits, a.decimals),
    amount_subunits: a.amount_subunits,
    token_symbol: a.token_symbol,
    chain: a.chain,
    network: a.network,
    status: a.status,
    created_at: a.created_at,
    ...(a.reason ? { reason: a.reason } : {}),
    ...(a.policy_id ? { policy_id: a.policy_id } : {}),
    ...(a.ledger_entry_id ? { ledger_entry_id: a.ledger_entry_id } : {}),
    ...(a.spend_reference ? { spend_reference: a.spend_reference } : {}),
    ...(a.api_domain ? { api_domain: a.api_domain } : {}),
    ...(a.reference ? { reference: a.reference } : {}),
    ...(a.metadata ? { metadata: a.metadata } : {}),
    ...(a.settlement ? { settlement: a.settlement } : {}),
    ...(extra.evaluation ? { trace: extra.evaluation.trace } : {}),
  };
}
