/**
 * Hosts the merchant actors (lib/merchants/merchant.ts). After every committed change of a merchant it tells each
 * API node to forget which keys it cached for that merchant (and waits for their answers), so that a key
 * rotated away or revoked is looked up again at once. Validity itself never depends on this message: the
 * gateway checks the key against the merchant it reads on every request.
 */
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { merchantBehavior, type MerchantReply } from '../lib/merchants/merchant.ts';

/** the API gateway's action that drops cached keys of a merchant (services/api.service.ts) */
export const AUTH_CHANGED_ACTION = 'api.authChanged';
const ACK_TIMEOUT_MS = 2000;

/** Calls every node that runs the gateway; a node that does not answer in time forgets on its TTL. */
export async function announceAuthChange(broker: ServiceBroker, merchantId: string): Promise<void> {
  const list = broker.registry.getActionEndpoints(AUTH_CHANGED_ACTION) as unknown as { endpoints?: Array<{ id: string }> } | undefined;
  const nodes = [...new Set((list?.endpoints ?? []).map((e) => e.id))];
  await Promise.allSettled(
    nodes.map((nodeID) => broker.call(AUTH_CHANGED_ACTION, { merchant_id: merchantId }, { nodeID, timeout: ACK_TIMEOUT_MS })),
  );
}

export function createMerchantActorsService(rt: Runtime): ServiceSchema {
  return {
    name: 'merchant-actors',
    // the announcement is awaited before the reply goes back, whether the message came through the broker
    // or straight from this node (sendToActor)
    mixins: [actorHostMixin(rt, merchantBehavior, {}, (broker, res: MerchantReply) => announceAuthChange(broker, res.merchant.id))],
  };
}
