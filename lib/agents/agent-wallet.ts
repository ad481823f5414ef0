/**
 * The agent-wallet actor (one per wallet id): its current spend policy and the spends its windows count.
 * Attempts on one wallet are decided one at a time here, so concurrent attempts can never together
 * reserve more than a window cap; an allowed attempt writes the attempt, its ledger transfer (and, for an
 * on-chain target, the payout that carries it out) and the updated window in one atomic write. The
 * attempts queued for a wallet are decided in order in one turn and share that write (actors/runtime.ts).
 * Each message has its handler in a module of its own beside this one.
 */
import type { ActorBehavior, Decision } from '../core/actor.ts';
import type { Store } from '../store/port.ts';
import { ServiceError } from '../core/errors.ts';
import { isLedgerError } from '../ledger/index.ts';
import { AGENT_WALLET_STATES, X402_PAID, type AgentWalletMsg, type AgentWalletReply, type AgentWalletState } from './state.ts';
import { setPolicy } from './set-policy.ts';
import { attempt } from './attempt.ts';
import { approve } from './approve.ts';
import { deny } from './deny.ts';
import { execute } from './execute.ts';

function handle(
  store: Store,
  state: AgentWalletState | null,
  msg: AgentWalletMsg,
  now: Date,
): Promise<Decision<AgentWalletState, AgentWalletReply>> {
  switch (msg.type) {
    case 'set_policy':
      return setPolicy(store, state, msg, now);
    case 'attempt':
      return attempt(store, state, msg, now);
    case 'approve':
      return approve(store, state, msg, now);
    case 'deny':
      return deny(store, state, msg, now);
    case 'execute':
      return execute(store, state, msg, now);
  }
}

export function makeAgentWalletBehavior(store: Store): ActorBehavior<AgentWalletState, AgentWalletMsg, AgentWalletReply> {
  return {
    collection: AGENT_WALLET_STATES,
    // another wallet's actor created the account or paid the challenge first: decide again
    retryDuplicatesIn: ['ledger_accounts', X402_PAID],
    // attempts and executions of one wallet are decided together in one turn, committed in one write
    batches: (msg) => msg.type === 'attempt' || msg.type === 'execute',
    // the handlers build a new state (nextState) and never change the one they are given
    keepsState: true,
    async handle(state, msg, now, view) {
      try {
        return await handle(view ?? store, state, msg, now);
      } catch (e) {
        if (isLedgerError(e)) throw new ServiceError(409, e.message, 'CONFLICT');
        throw e;
      }
    },
  };
}
