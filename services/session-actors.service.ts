/**
 * Hosts the payment-session actors (lib/sessions/payment-session.ts). Callers send messages with
 * `ctx.call('session-actors.send', { id: <session_id>, msg })`, routed by the session id. After a
 * committed transition it emits `webhooks.nudge` { event_id } for each webhook row written: only a hint
 * that lets delivery start at once; the webhook service delivers from the store either way.
 * Counted deposits settle into the merchant's default wallet in the same write (lib/wallets/settlement.ts).
 */
import type { ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { actorHostMixin } from '../mixins/actor-host.mixin.ts';
import { sessionBehavior, type SessionReply } from '../lib/sessions/payment-session.ts';
import { inboxResolver } from '../lib/chains/deposit-inbox.ts';
import { cachedRate } from '../lib/rates/engine.ts';
import { openWalletDirectory } from '../lib/wallets/directory.ts';
import { settlementEffects } from '../lib/wallets/settlement.ts';

export function createSessionActorsService(rt: Runtime): ServiceSchema {
  const wallets = openWalletDirectory(rt.store, rt.config.dataDir, () => rt.now());
  const behavior = sessionBehavior({
    // a completion records the token's USD rate from the shared cache (one store read, no network call)
    rates: (token, now) => cachedRate(rt.store, rt.config.rates, token, 'USD', now),
    settle: (s, credited, reverted, now) => settlementEffects(rt.store, wallets, s, credited, reverted, now),
    deposits: inboxResolver(rt.store),
  });
  return {
    name: 'session-actors',
    // a committed transition's webhook rows: a nudge each, whether the message came through the broker or
    // straight from this node (sendToActor)
    mixins: [
      actorHostMixin(rt, behavior, {}, (broker, res: SessionReply) => {
        for (const event_id of res?.events ?? []) broker.emit('webhooks.nudge', { event_id }).catch(() => undefined);
      }),
    ],
  };
}
