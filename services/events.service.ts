/**
 * The merchant events API: `GET /v1/events` (newest first, cursor paging, filters) and
 * `GET /v1/events/stream` (Server-Sent Events, resumable with Last-Event-ID), both over the webhook
 * outbox (lib/events/). Every node running this service also runs the sequencer that stamps committed
 * events with their stream position.
 *
 * Events are pushed: a commit emits `webhooks.nudge` (after the write), the node that receives it runs a
 * sequencer pass at once, and a pass that stamped something broadcasts `events.sequenced`; on that word
 * each node's hub reads the new rows once and pushes them to its open streams. An open stream reads
 * nothing and runs no timer but its heartbeat. Moleculer events are at-most-once, so each node also runs
 * one slow safety-net pass every EVENTS_POLL_INTERVAL_MS (rows whose nudge or word was lost, a writer that
 * died between its commit and its nudge): one per node, however many streams are open.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { validate } from '../lib/http/validation.ts';
import { getEvent, listEvents, readAfter, sequenceAll, startSeq, typeMatcher } from '../lib/events/feed.ts';
import { eventStream } from '../lib/events/stream.ts';
import { EventHub } from '../lib/events/hub.ts';

type Http = { query?: Record<string, string> };

export function createEventsService(rt: Runtime): ServiceSchema {
  const cfg = rt.config.events;
  let hub: EventHub | null = null;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopping = false;
  /** ends this node's open streams when it stops, so the HTTP server can close */
  const streams = new AbortController();

  /** One sequencer run at a time per node; a request during a run makes it go round once more. */
  function sequence(broker: { broadcast(event: string, data?: unknown): unknown }, logger: { warn(...a: unknown[]): void }): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        // rows stamped here reach this node's streams straight from the pass, before any further read
        const n = await sequenceAll(rt.store, 50, (after, rows) => hub?.offer(after, rows));
        if (n > 0) void broker.broadcast('events.sequenced', { count: n });
        // every pass, stamped here or not: rows another node stamped reach this node's streams even when
        // its word was lost (Moleculer events are at-most-once)
        await hub?.poke();
      } while (again && !stopping);
    })()
      .catch((e) => logger.warn('event sequencer pass failed:', (e as Error).message))
      .finally(() => {
        running = null;
      });
    return running;
  }

  return {
    name: 'events',
    actions: {
      /** GET /v1/events */
      list: {
        async handler(ctx: Context<Http>) {
          const query = validate('EventListQuery', ctx.params.query ?? {}, 'query');
          return listEvents(rt.store, callingMerchant(ctx).merchant_id, query);
        },
      },

      /** GET /v1/events/{event_id} */
      get: {
        async handler(ctx: Context<{ params: { event_id: string } }>) {
          return getEvent(rt.store, callingMerchant(ctx).merchant_id, String(ctx.params.params?.event_id));
        },
      },

      /** GET /v1/events/stream: a text/event-stream body that lasts until the client leaves (or EVENTS_STREAM_MAX_MS). */
      stream: {
        async handler(ctx: Context<Http>) {
          const query = validate('EventStreamQuery', ctx.params.query ?? {}, 'query');
          const merchantId = callingMerchant(ctx).merchant_id;
          const meta = requestMeta(ctx);
          // EventSource sends Last-Event-ID on reconnects; a first connection may pass it in the query
          const lastId = meta.headers?.['last-event-id'] ?? query.last_event_id;
          const start = await startSeq(rt.store, merchantId, lastId?.trim());
          // validates `type` now, so a bad filter is a 400 rather than an empty stream
          const matches = typeMatcher(query.type);
          meta.$responseType = 'text/event-stream; charset=utf-8';
          meta.$responseHeaders = { 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' };
          const logger = this.logger;
          return eventStream({
            start,
            read: (after) => readAfter(rt.store, merchantId, after, 100, query.type),
            matches,
            subscribe: (onRows) => hub!.subscribe(merchantId, onRows),
            heartbeatMs: cfg.heartbeatMs,
            maxMs: cfg.streamMaxMs,
            onError: (e) => logger.warn('event stream read failed:', (e as Error).message),
            signal: streams.signal,
          });
        },
      },

      /** Internal: stamp every committed event now (tests, operators). */
      sequence: {
        visibility: 'public',
        async handler() {
          await sequence(this.broker, this.logger);
          await sequence(this.broker, this.logger);
          return { ok: true };
        },
      },
    },
    events: {
      /** an outbox row was just committed: stamp it now rather than at the next pass */
      'webhooks.nudge'() {
        void sequence(this.broker, this.logger);
      },
      /** another node stamped events: the hub reads them now (this node's own pass has poked it already) */
      'events.sequenced'(ctx: Context) {
        if (ctx.nodeID !== this.broker.nodeID) void hub?.poke();
      },
    },
    async started() {
      hub = new EventHub(rt.store, (e) => this.logger.warn('event hub read failed:', (e as Error).message));
      await hub.poke();
      timer = setInterval(() => void sequence(this.broker, this.logger), cfg.pollIntervalMs);
      timer.unref();
    },
    async stopped() {
      stopping = true;
      streams.abort();
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
