/**
 * Moleculer's Shard strategy, rebuilt whenever the endpoints it is offered change. The stock strategy
 * rebuilds its ring only on `$node.*` events, so a node whose own actor service stopped (store-fence.ts)
 * kept routing to itself and failed with INVALID_ENDPOINT; an endpoint that left for any other reason
 * did the same until the next node event.
 */
import { Strategies } from 'moleculer';

type Endpoint = { id: string };
const Shard = Strategies.Shard as unknown as new (...a: unknown[]) => {
  needRebuild: boolean;
  select(list: Endpoint[], ctx: unknown): Endpoint;
};

export class StableShardStrategy extends Shard {
  private members = '';

  override select(list: Endpoint[], ctx: unknown): Endpoint {
    let ids = '';
    for (const ep of list) ids += `${ep.id}\n`;
    if (ids !== this.members) {
      this.members = ids;
      this.needRebuild = true;
    }
    return super.select(list, ctx);
  }
}

/** the strategy's registered name (a string, so that it travels in a node's INFO packet) */
export const STABLE_SHARD = 'StableShard';
(Strategies as unknown as { register(name: string, s: unknown): void }).register(STABLE_SHARD, StableShardStrategy);
