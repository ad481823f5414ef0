/**
 * `approve`: a merchant approves an attempt that awaited approval. The caps are checked again (now, not at
 * the attempt's time), and an x402 challenge closed meanwhile denies it: approving would pay for nothing.
 */
import type { WriteOp } from '../store/port.ts';
import { conflict, notFound } from '../core/errors.ts';
import { auditOp } from '../core/audit.ts';
import { ATTEMPTS, type SpendAttemptDoc } from '../spend/attempts.ts';
import { nextState, type AgentWalletHandler } from './state.ts';
import { evaluateAttempt, liveSpends } from './windows.ts';
import { reserveAllowed } from './reserve.ts';

export const approve: AgentWalletHandler<'approve'> = async (store, state, msg, now) => {
  const at = now.toISOString();
  const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
  if (!a || a.merchant_id !== msg.ctx.caller_merchant_id || a.agent_wallet_id !== msg.ctx.wallet.id) throw notFound('spend attempt');
  if (a.status !== 'approval_required')
    throw conflict(`spend attempt ${a.id} is ${a.status}; only an attempt awaiting approval can be approved`);
  const { changed: _, ...window } = await liveSpends(store, state, now);
  const evaluation = evaluateAttempt(state, window, a, msg.ctx, now, true);
  const evaluated: SpendAttemptDoc = {
    ...a,
    status: evaluation.status,
    reason: evaluation.reason ?? null,
    policy_id: state?.policy?.id ?? a.policy_id,
    updated_at: at,
  };
  const r = await reserveAllowed(store, evaluated, msg.ctx, msg.payout_id, window, now);
  const doc = r.doc;
  const effects: WriteOp[] = [
    { op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 },
    ...r.ops,
    auditOp(
      'agent_wallet.spend.approved',
      { merchant_id: a.merchant_id, agent_wallet_id: a.agent_wallet_id, spend_attempt_id: a.id, status: doc.status, reason: doc.reason },
      at,
    ),
  ];
  return {
    ...(doc.status === 'pending' && state ? { state: nextState(state, a.merchant_id, r.window, at) } : {}),
    effects,
    reply: { attempt: doc, evaluation },
  };
};
