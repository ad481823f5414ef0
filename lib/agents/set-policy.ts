/** `set_policy`: a new version of the wallet's spend policy, stored and audited with the change. */
import { auditOp } from '../core/audit.ts';
import { parsePolicy, presentPolicyBody } from '../spend/policy.ts';
import { POLICIES, nextState, type AgentWalletHandler, type StoredPolicy } from './state.ts';
import { keepMs, policyOf, rebuild } from './windows.ts';

export const setPolicy: AgentWalletHandler<'set_policy'> = async (store, state, msg, now) => {
  const at = now.toISOString();
  const parsedPolicy = parsePolicy(msg.body);
  const policy: StoredPolicy = {
    id: msg.policy_id,
    version_no: (state?.policy?.version_no ?? 0) + 1,
    body: presentPolicyBody(parsedPolicy),
    created_at: at,
  };
  // windows reaching further back than the actor kept: count what it had let go
  const window =
    keepMs(parsedPolicy) > keepMs(policyOf(state?.policy ?? null))
      ? await rebuild(store, msg.wallet_id, now, keepMs(parsedPolicy))
      : { spends: state?.spends ?? [], buckets: state?.buckets ?? [] };
  const next = { ...nextState(state, msg.merchant_id, window, at), policy };
  return {
    state: next,
    effects: [
      { op: 'insert', coll: POLICIES, doc: { ...policy, agent_wallet_id: msg.wallet_id, merchant_id: msg.merchant_id } },
      // a policy change is audited with the change
      auditOp(
        'agent_wallet.policy.set',
        { merchant_id: msg.merchant_id, agent_wallet_id: msg.wallet_id, policy_id: policy.id, version_no: policy.version_no },
        at,
      ),
    ],
    reply: { policy },
  };
};
