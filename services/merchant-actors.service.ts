/**
 * Hosts the merchant actors (actors/merchant.ts) and the per-merchant request count of the rate limit
 * (`admit`, routed by merchant id like the actor itself: one node counts for a merchant; see
 * lib/core/rate-limit.ts). After every committed change of a merchant it tells each API node to drop
 * what it cached about that merchant's credentials, and waits for their answers, so that a revoked key
 * or a new rate limit holds everywhere once the change is answered.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { merchantBehavior, type MerchantReply } from '../actors/merchant.ts';
import { RATE_LIMITS, WindowCounter } from '../lib/core/rate-limit.ts';

/** the API gateway's action that drops cached credentials of a merchant (services/api.service.ts) */
export const AUTH_CHANGED_ACTION = 'api.authChanged';
const ACK_TIMEOUT_MS = 2000;

/** Calls every node that runs the gateway; a node that does not answer in time forgets on its TTL. */
export async function announceAuthChange(ctx: Context, merchantId: string): Promise<void> {
  const list = ctx.broker.registry.getActionEndpoints(AUTH_CHANGED_ACTION) as unknown as { endpoints?: Array<{ id: string }> } | undefined;
  const nodes = [...new Set((list?.endpoints ?? []).map((e) => e.id))];
  await Promise.allSettled(nodes.map((nodeID) => ctx.call(AUTH_CHANGED_ACTION, { merchant_id: merchantId }, { nodeID, timeout: ACK_TIMEOUT_MS })));
}

export function createMerchantActorsService(rt: Runtime): ServiceSchema {
  let counter: WindowCounter;
  /** the newest version of each merchant this node's actors committed (answered with every admission) */
  const versions = new Map<string, number>();
  return {
    name: 'merchant-actors',
    mixins: [actorHostMixin(rt, merchantBehavior)],
    actions: {
      /**
       * Counts one request of the merchant in the current minute; answers the count including it, and the
       * newest merchant version committed here (0: none since start), so that a gateway the invalidation
       * did not reach (one this node did not know yet) still notices the change on its next request.
       */
      admit: {
        visibility: 'public',
        strategy: 'Shard',
        strategyOptions: { shardKey: 'id' },
        async handler(ctx: Context<{ id: string }>) {
          const count = await counter.hit(RATE_LIMITS.merchant.key(ctx.params.id), rt.now());
          return { count, version: versions.get(ctx.params.id) ?? 0 };
        },
      },
    },
    hooks: {
      after: {
        async send(ctx: Context<{ id: string }>, res: MerchantReply) {
          const v = res?.merchant?.version ?? 0;
          if (v > (versions.get(ctx.params.id) ?? 0)) versions.set(ctx.params.id, v);
          await announceAuthChange(ctx, ctx.params.id);
          return res;
        },
      },
    },
    created() {
      counter = new WindowCounter(rt.store);
    },
    async stopped() {
      await counter.stop().catch(() => undefined);
    },
  } as unknown as ServiceSchema;
}
