/**
 * What the agent-wallet actor (one per wallet id) holds and hears: its current spend policy, the spends
 * its windows count, the messages it decides and its replies. The handlers of each message live beside
 * this file; agent-wallet.ts hands a message to its handler.
 */
import type { Decision } from '../core/actor.ts';
import type { Doc, Store } from '../store/port.ts';
import type { Evaluation, PolicyInput } from '../spend/policy.ts';
import type { SpendAttemptDoc, AttemptInput, AttemptContext } from '../spend/attempts.ts';

export const AGENT_WALLET_STATES = 'agent_wallet_states';
export const POLICIES = 'agent_policies';
export const REFERENCES = 'spend_references';
/**
 * id = challenge id: the one payment of an x402 challenge, an agent spend's (inserted with its execution)
 * or an on-chain proof's (inserted with its settlement, lib/x402/redeem.ts): the x402 domain owns it.
 */
export { CHALLENGE_PAYMENTS as X402_PAID, type ChallengePaymentDoc } from '../x402/model.ts';

export interface StoredPolicy {
  id: string;
  version_no: number;
  body: PolicyInput;
  created_at: string;
}
/** A spend whose outcome is still open (an on-chain execution): voided, it stops counting. */
export interface SpendEntry {
  attempt_id: string;
  transfer_id: string;
  rail: string;
  amount: string;
  at: string;
  final: boolean;
}
/** Settled spends of one rail and minute, summed: the state stays small however many spends a window holds. */
export interface SpendBucket {
  rail: string;
  minute: number;
  last_at: number;
  amount: string;
  count: number;
}

export interface AgentWalletState extends Doc {
  merchant_id: string;
  policy: StoredPolicy | null;
  spends: SpendEntry[];
  buckets?: SpendBucket[];
  updated_at: string;
}

/** What the windows count: in-flight chain spends one by one, everything settled folded into buckets. */
export interface Windowed {
  spends: SpendEntry[];
  buckets: SpendBucket[];
}

export type AgentWalletMsg =
  | { type: 'set_policy'; wallet_id: string; merchant_id: string; policy_id: string; body: PolicyInput }
  /** attempt_id and payout_id are minted for this message (no stored attempt, transfer or payout has them) */
  | { type: 'attempt'; attempt_id: string; payout_id: string; input: AttemptInput; ctx: AttemptContext; dry_run: boolean }
  | { type: 'approve'; attempt_id: string; payout_id: string; ctx: AttemptContext }
  | { type: 'deny'; attempt_id: string; caller_merchant_id: string }
  | { type: 'execute'; attempt_id: string };

/** The message of one type, for its handler. */
export type AgentWalletMsgOf<T extends AgentWalletMsg['type']> = Extract<AgentWalletMsg, { type: T }>;

/** One message's handler: decides from the state and the message, writes nothing itself. */
export type AgentWalletHandler<T extends AgentWalletMsg['type']> = (
  store: Store,
  state: AgentWalletState | null,
  msg: AgentWalletMsgOf<T>,
  now: Date,
) => Promise<Decision<AgentWalletState, AgentWalletReply>>;

export interface AgentWalletReply {
  attempt?: SpendAttemptDoc;
  evaluation?: Evaluation;
  policy?: StoredPolicy;
  /** false when an attempt with this reference already existed */
  created?: boolean;
}

/** The state after a message that changed the windows (a wallet without a document yet gets one). */
export function nextState(state: AgentWalletState | null, merchantId: string, w: Windowed, at: string): AgentWalletState {
  return {
    id: state?.id ?? '',
    merchant_id: state?.merchant_id ?? merchantId,
    policy: state?.policy ?? null,
    spends: w.spends,
    buckets: w.buckets,
    updated_at: at,
    ...(state?.version !== undefined ? { version: state.version } : {}),
  };
}
