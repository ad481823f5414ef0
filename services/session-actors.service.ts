/**
 * Hosts the payment-session actors (actors/payment-session.ts). Callers send messages with
 * `ctx.call('session-actors.send', { id: <session_id>, msg })`, routed by the session id. After a
 * committed transition it emits `webhooks.nudge` { event_id } for each webhook row written: only a hint
 * that lets delivery start at once; the webhook service delivers from the store either way.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { paymentSessionBehaviorWithRates, type SessionReply } from '../actors/payment-session.ts';
import { cachedRate } from '../lib/rates/engine.ts';

export function createSessionActorsService(rt: Runtime): ServiceSchema {
  return {
    name: 'session-actors',
    // a completion records the token's USD rate from the shared cache (one store read, no network call)
    mixins: [actorHostMixin(rt, paymentSessionBehaviorWithRates((token, now) => cachedRate(rt.store, rt.config.rates, token, 'USD', now)))],
    hooks: {
      after: {
        send(ctx: Context, res: SessionReply) {
          for (const event_id of res?.events ?? []) {
            ctx.emit('webhooks.nudge', { event_id }).catch(() => undefined);
          }
          return res;
        },
      },
    },
  } as unknown as ServiceSchema;
}
