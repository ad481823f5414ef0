/**
 * Hosts actors in a Moleculer service: the `send` action is routed by the actor id with the Shard
 * strategy (preferLocal off; lib/cluster/shard-strategy.ts), so that one node usually holds an actor; the
 * store's compare-and-set keeps it correct when two nodes briefly hold the same one.
 */
import type { Context, Service, ServiceBroker, ServiceSchema } from 'moleculer';
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
type Hosting<S extends Doc, M, R> = Service & {
  actors?: ActorHost<S, M, R>;
  /** the host's send followed by the service's `afterReply` (what the action and a direct send both run) */
  deliver?: (id: string, msg: M) => Promise<R>;
};

/**
 * What a hosting service does with each reply of its actors, on whichever path the message came. A promise
 * it returns is awaited before the caller gets the reply (a merchant's key-cache drops land first).
 */
export type AfterReply<R> = (broker: ServiceBroker, reply: R) => void | Promise<void>;

/** the endpoints of an action as the registry keeps them (the published types leave them out) */
type Endpoints = { endpoints: Array<{ local: boolean; isAvailable: boolean }> } | undefined;

/**
 * Sends a message to an actor of `service` (through its `send` action). When this node holds the action's
 * only endpoint (one node: the embedded default), the broker could route it nowhere else, so the message
 * goes straight to this node's host: no second Context, timeout timer or endpoint selection for a call
 * that can only land here. With several endpoints the broker routes it by id, as before.
 */
export function sendToActor<M, R>(caller: Pick<Context, 'call' | 'broker'>, service: string, id: string, msg: M): Promise<R> {
  const action = ACTIONS.get(service) ?? ACTIONS.set(service, `${service}.send`).get(service)!;
  const { broker } = caller;
  const list = (broker.registry as unknown as { getActionEndpoints(name: string): Endpoints }).getActionEndpoints(action)?.endpoints;
  const only = list?.length === 1 ? list[0] : null;
  const local = only?.local && only.isAvailable ? (broker.getLocalService(service) as Hosting<Doc, M, R> | undefined) : undefined;
  if (local?.deliver) return local.deliver(id, msg);
  return caller.call(action, { id, msg } satisfies SendParams<M>) as Promise<R>;
}

/** each actor service's send action name, made once */
const ACTIONS = new Map<string, string>();

export function actorHostMixin<S extends Doc, M, R>(
  rt: Runtime,
  behavior: ActorBehavior<S, M, R>,
  opts: ActorHostOptions = {},
  afterReply?: AfterReply<R>,
): Partial<ServiceSchema> {
  return {
    // No action hooks on an actor service: a direct send (sendToActor) skips the broker and would skip
    // them. Reply work goes in `afterReply`, which both paths run; `created` refuses a service with hooks.
    actions: {
      send: {
        visibility: 'public',
        strategy: STABLE_SHARD,
        strategyOptions: { shardKey: 'id' },
        handler(this: Hosting<S, M, R>, ctx: Context<SendParams<M>>) {
          return this.deliver!(ctx.params.id, ctx.params.msg);
        },
      },
    },
    created(this: Hosting<S, M, R>) {
      if (this.schema.hooks)
        throw new Error(`${this.name}: an actor service takes no action hooks (a direct send skips them); use afterReply`);
      const activations = rt.metrics.actorActivations.labels(behavior.collection);
      const host = new ActorHost(rt.store, behavior, { now: () => rt.now(), onActivate: () => activations.inc(), ...opts });
      this.actors = host;
      const broker = this.broker;
      this.deliver = afterReply
        ? (id, msg) =>
            host.send(id, msg).then((reply) => {
              const done = afterReply(broker, reply);
              // a synchronous afterReply (session nudges) costs no extra promise
              return done instanceof Promise ? done.then(() => reply) : reply;
            })
        : (id, msg) => host.send(id, msg);
      rt.metrics.actorSources.set(behavior.collection, () => ({ depth: host.depth, active: host.size }));
    },
    stopped(this: Hosting<S, M, R>) {
      rt.metrics.actorSources.delete(behavior.collection);
      this.actors?.stop();
    },
  };
}
