/** Collections of agent wallets (spend policies, spend attempts) and x402 challenges and redemptions. */
import type { CollectionSpec } from '../port.ts';

export const AGENTS_COLLECTIONS: CollectionSpec[] = [
  /** the agent-wallet actor's document, id = the wallet id: current policy and the spends its windows count */
  { name: 'agent_wallet_states' },
  /** every policy version ever set (id pol_…); an attempt's policy_id names one */
  { name: 'agent_policies', indexes: [{ fields: ['agent_wallet_id', 'id'] }] },
  /** read by their wallet (its pages filter on the merchant too) and by their due execution, never by merchant alone */
  { name: 'spend_attempts', indexes: [{ fields: ['agent_wallet_id', 'id'] }, { fields: ['execute_due_at'], sparse: true }] },
  /**
   * id = <wallet id>:<sha256 of reference>: the reference is the attempt's idempotency key (an x402 spend
   * that paid its challenge has none: the challenge's payment row holds its request hash)
   */
  { name: 'spend_references' },
  { name: 'x402_challenges', indexes: [{ fields: ['merchant_id', 'id'] }] },
  /** id = a challenge id: its one payment, an agent spend's or an on-chain proof's (a second payment of it is refused) */
  { name: 'x402_agent_payments' },
  /**
   * id = the challenge id (a challenge is consumed once); proof_key unique: the proof's replay key (lib/x402/replay.ts), so a proof redeems once.
   * Holds the settlement's signed bytes before they are sent. next_check_at is set only while it settles
   * (the scanner's due time): indexed only there, so an agent wallet's redemption (settled at once) writes no entry.
   */
  {
    name: 'x402_redemptions',
    indexes: [
      { fields: ['proof_key'], unique: true },
      { fields: ['next_check_at'], sparse: true },
    ],
  },
];
