/**
 * Hosts actors in a Moleculer service: the `send` action is routed by the actor id with the Shard
 * strategy (preferLocal off; lib/cluster/shard-strategy.ts), so that one node usually holds an actor; the
 * store's compare-and-set keeps it correct when two nodes briefly hold the same one.
 */
import type { Context, Service, ServiceSchema } from 'moleculer';
import { ActorHost, type ActorHostOptions } from '../actors/runtime.ts';
import type { ActorBehavior } from '../lib/core/actor.ts';
import type { Doc } from '../lib/store/port.ts';
import type { Runtime } from '../lib/runtime/index.ts';
import { STABLE_SHARD } from '../lib/cluster/shard-strategy.ts';

export interface SendParams<M> {
  id: string;
  msg: M;
}

/** The hosting service as its handlers see it (tests reach the host through it too). */
type Hosting<S extends Doc, M, R> = Service & { actors?: ActorHost<S, M, R> };

export function actorHostMixin<S extends Doc, M, R>(
  rt: Runtime,
  behavior: ActorBehavior<S, M, R>,
  opts: ActorHostOptions = {},
): Partial<ServiceSchema> {
  return {
    actions: {
      send: {
        visibility: 'public',
        strategy: STABLE_SHARD,
        strategyOptions: { shardKey: 'id' },
        handler(this: Hosting<S, M, R>, ctx: Context<SendParams<M>>) {
          return this.actors!.send(ctx.params.id, ctx.params.msg);
        },
      },
    },
    created(this: Hosting<S, M, R>) {
      const activations = rt.metrics.actorActivations.labels(behavior.collection);
      const host = new ActorHost(rt.store, behavior, { now: () => rt.now(), onActivate: () => activations.inc(), ...opts });
      this.actors = host;
      rt.metrics.actorSources.set(behavior.collection, () => ({ depth: host.depth, active: host.size }));
    },
    stopped(this: Hosting<S, M, R>) {
      rt.metrics.actorSources.delete(behavior.collection);
      this.actors?.stop();
    },
  };
}
