/** Hosts the agent-wallet actors (lib/agents/agent-wallet.ts): one spend decision at a time per wallet. */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { makeAgentWalletBehavior } from '../lib/agents/agent-wallet.ts';

export function createAgentWalletActorsService(rt: Runtime): ServiceSchema {
  // 50+ concurrent attempts on one wallet queue up rather than being refused
  return {
    name: 'agent-wallet-actors',
    mixins: [actorHostMixin(rt, makeAgentWalletBehavior(rt.store), { mailboxSize: 500 })],
  };
}
