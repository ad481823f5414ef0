/**
 * Webhooks (facade): the delivery log and the retry endpoint of a session, the internal scan, and the
 * nudge a session transition sends after committing its outbox row (attempted once the event sequencer
 * stamped the row: its `events.sequenced` word). The delivery engine (outbox,
 * leases, signing, dialling, retry schedule, audit) is lib/webhooks/engine.ts; it runs on every node
 * that runs this service.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { notFound } from '../lib/core/errors.ts';
import { validate } from '../lib/http/validation.ts';
import type { Doc } from '../lib/store/port.ts';
import { presentEvent, type DeliveryDoc } from '../lib/webhooks/delivery.ts';
import { WEBHOOK_EVENTS, createWebhookDelivery, type WebhookDelivery } from '../lib/webhooks/engine.ts';
import { nodeAlerts } from '../lib/ops/alerts/index.ts';

export { USER_AGENT } from '../lib/webhooks/engine.ts';

const COLL = WEBHOOK_EVENTS;
type HttpParams<B = unknown> = { body?: B; params: { session_id: string } };

export function createWebhooksService(rt: Runtime): ServiceSchema {
  const { store } = rt;
  const alerts = nodeAlerts(rt);
  let engine: WebhookDelivery;

  /** The session's events for its owner; 404 for anyone else or an unknown session. */
  async function sessionEvents(sessionId: string, merchantId: string): Promise<DeliveryDoc[]> {
    const events = await store.find<DeliveryDoc>(COLL, { session_id: sessionId, merchant_id: merchantId }, { sort: 'created_at' });
    if (events.length > 0) return events;
    const session = await findSession(sessionId);
    if (!session || session.merchant_id !== merchantId) throw notFound('payment session');
    return [];
  }

  async function findSession(id: string): Promise<{ merchant_id?: unknown } | null> {
    try {
      return await store.get<Doc & { merchant_id?: unknown }>('payment_sessions', id);
    } catch {
      return null;
    }
  }

  const present = (sessionId: string, events: DeliveryDoc[]) => ({ session_id: sessionId, events: events.map(presentEvent) });

  return {
    name: 'webhooks',
    actions: {
      /** GET /v1/payment_sessions/{session_id}/webhooks: the session's delivery log. */
      log: {
        async handler(ctx: Context<HttpParams>) {
          const sessionId = String(ctx.params.params.session_id);
          return present(sessionId, await sessionEvents(sessionId, callingMerchant(ctx).merchant_id));
        },
      },

      /**
       * POST /v1/payment_sessions/{session_id}/webhook/retry: one immediate attempt for each event of
       * the session (or only `event_id`), whatever its status; an event being attempted right now is
       * left to that attempt. Answers with the delivery log after the attempts.
       */
      retry: {
        async handler(ctx: Context<HttpParams>) {
          const body = validate('WebhookRetryRequest', ctx.params.body ?? {});
          const sessionId = String(ctx.params.params.session_id);
          const merchantId = callingMerchant(ctx).merchant_id;
          let events = await sessionEvents(sessionId, merchantId);
          if (body.event_id !== undefined) {
            events = events.filter((e) => e.id === body.event_id);
            if (events.length === 0) throw notFound('webhook event');
          }
          await engine.redeliver(events.map((e) => e.id));
          return present(sessionId, await sessionEvents(sessionId, merchantId));
        },
      },

      /** Internal: scan once now (tests, operators). */
      scan: {
        visibility: 'public',
        async handler() {
          return { claimed: await engine.scanNow() };
        },
      },
    },
    events: {
      /** Sent after a transition committed its outbox row: try at once instead of at the next scan. */
      'webhooks.nudge': {
        handler(ctx: Context<{ event_id?: unknown }>) {
          if (typeof ctx.params?.event_id === 'string') void engine.nudge(ctx.params.event_id);
        },
      },
      /** the event sequencer (any node) stamped rows: nudged rows that waited for their stamp go now */
      'events.sequenced': {
        handler() {
          engine.sequenced();
        },
      },
    },
    created() {
      const log = this.logger;
      // moleculer's registry matches any node when nodeID is left out (its typing asks for one)
      const registry = this.broker.registry as unknown as { hasService(name: string, nodeID?: string): boolean };
      engine = createWebhookDelivery({
        store,
        config: rt.config.webhooks,
        allowPrivate: rt.config.webhookAllowPrivate,
        keyring: rt.keyring,
        registry: rt.metrics.registry,
        now: () => rt.now(),
        log,
        sequencerRuns: () => registry.hasService('events'),
        // failed_webhook_flood counts attempts per merchant (after the commit: the outcome is recorded first)
        onAttempt: (row, merchant, result) =>
          alerts.report(
            { kind: 'webhook_attempt', ok: result.ok, merchant_id: row.merchant_id },
            {
              merchant_id: row.merchant_id,
              merchant_name: merchant.name,
              environment: merchant.sandbox ? 'sandbox' : 'live',
              chain: row.body.chain,
              network: row.body.network,
              session_id: row.session_id,
              delivery_id: row.id,
              last_error_code: result.ok ? null : result.status ? `http_${result.status}` : result.error,
            },
            log,
          ),
      });
    },
    started() {
      engine.start();
    },
    async stopped() {
      await engine.stop();
    },
  };
}
