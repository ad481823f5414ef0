/** `deny`: a merchant denies an attempt that awaited approval (denying it twice answers the denial). */
import { conflict, notFound } from '../core/errors.ts';
import { auditOp } from '../core/audit.ts';
import { ATTEMPTS, type SpendAttemptDoc } from '../spend/attempts.ts';
import type { AgentWalletHandler } from './state.ts';

export const deny: AgentWalletHandler<'deny'> = async (store, state, msg, now) => {
  const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
  if (!a || a.merchant_id !== msg.caller_merchant_id || a.agent_wallet_id !== (state?.id ?? a.agent_wallet_id))
    throw notFound('spend attempt');
  if (a.status === 'denied') return { reply: { attempt: a } };
  if (a.status !== 'approval_required')
    throw conflict(`spend attempt ${a.id} is ${a.status}; only an attempt awaiting approval can be denied`);
  const at = now.toISOString();
  const doc: SpendAttemptDoc = { ...a, status: 'denied', reason: 'denied_by_merchant', updated_at: at };
  return {
    effects: [
      { op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 },
      auditOp('agent_wallet.spend.denied', { merchant_id: a.merchant_id, agent_wallet_id: a.agent_wallet_id, spend_attempt_id: a.id }, at),
    ],
    reply: { attempt: doc },
  };
};
