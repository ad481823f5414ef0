/**
 * Webhook delivery from the outbox (`webhook_events`), on every node.
 *
 * - A session transition and its outbox row are one atomic write (the session actor's effects); this
 *   service delivers from the store, so a node dying after the commit loses nothing: the row stays
 *   `pending` and any node's scanner delivers it.
 * - The scanner claims due rows with store.claimDue (which pushes `next_attempt_at` by a lease), then
 *   marks each with `lease_until` by compare-and-set before dialling; `webhooks.nudge` {event_id} claims
 *   one row the same way at once. A row is attempted by one node at a time; every status change is a
 *   compare-and-set on the row's version, and the lease outlasts the attempt's deadline.
 * - Exactly once per event id in the store's sense (one `delivered`); a receiver may still see a repeat
 *   when a node dies after the receiver answered 2xx but before the outcome was committed, so every
 *   request carries a stable X-Service-Event-Id to de-duplicate on.
 * - Only 2xx is success; 3xx (never followed), 4xx, 5xx, time-outs and refused targets are failures,
 *   retried on the schedule of lib/webhooks/delivery.ts for 72 h, then `failed`.
 * - Audit: `payment_session.webhook.delivered` per delivery, `.failed` per failed attempt (with
 *   `final: true` on the one that ends the schedule), `.skipped` when the merchant has no webhook_url.
 */
import type { Context, ServiceSchema } from 'moleculer';
import { Counter, Histogram } from 'prom-client';
import type { Runtime } from '../lib/runtime.ts';
import type { Caller } from './routes/types.ts';
import { forbidden, notFound } from '../lib/errors.ts';
import { validate } from '../lib/validation.ts';
import { newId } from '../lib/ids.ts';
import { isConflict, type Doc, type WriteOp } from '../lib/store/port.ts';
import { liveSecrets, type MerchantState } from '../actors/merchant.ts';
import { EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from '../lib/webhooks/signature.ts';
import { postWebhook } from '../lib/webhooks/dialer.ts';
import { applyAttempt, applySkip, presentEvent, type DeliveryDoc, type LoggedAttempt } from '../lib/webhooks/delivery.ts';

const COLL = 'webhook_events';
/** rows attempted at once by one node */
const MAX_IN_FLIGHT = 32;
/** optimistic retries of the final write when the row changed meanwhile */
const MAX_CAS_RETRIES = 5;
export const USER_AGENT = 'StablecoinPaymentService-Webhooks/1';

type Meta = { user?: Caller };
type Logger = { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
type HttpParams<B = unknown> = { body?: B; params: { session_id: string } };

export function createWebhooksService(rt: Runtime): ServiceSchema {
  const { store } = rt;
  const cfg = rt.config.webhooks;
  /** longer than any attempt (its deadline is timeoutMs) plus the writes around it */
  const leaseMs = cfg.timeoutMs * 2 + 5_000;
  /** every background attempt of this node (capacity, and stop waits for them) */
  const running = new Set<Promise<void>>();
  /** rows this node holds the lease of, by id: the retry endpoint waits for these */
  const attempting = new Map<string, Promise<DeliveryDoc>>();
  let timer: NodeJS.Timeout | null = null;
  let scanning = false;
  let stopping = false;
  /** the last scan filled every free slot: more rows may be due, claim again as slots free up */
  let backlog = false;

  const attemptsTotal = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by result',
    labelNames: ['result'],
    registers: [rt.metrics.registry],
  });
  const latency = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Duration of webhook delivery attempts (DNS, connect, response headers)',
    labelNames: ['result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [rt.metrics.registry],
  });

  /** the rows are equal but for the sequencer's stream_seq and the version */
  const onlyStamped = (a: DeliveryDoc, b: DeliveryDoc) => {
    const strip = ({ version: _v, stream_seq: _s, ...rest }: DeliveryDoc & { stream_seq?: unknown }) => JSON.stringify(rest);
    return strip(a) === strip(b);
  };
  const leaseActive = (d: DeliveryDoc, now: Date) => typeof d.lease_until === 'string' && d.lease_until > now.toISOString();

  /**
   * Marks a row as being attempted by this node; null when somebody else changed it first. A change that
   * only stamped the row's event-stream position (lib/events/feed.ts) is not a claim: lease the fresh row.
   */
  async function lease(doc: DeliveryDoc, now: Date, again = true): Promise<DeliveryDoc | null> {
    const until = new Date(now.getTime() + leaseMs).toISOString();
    const next: DeliveryDoc = { ...doc, lease_until: until, next_attempt_at: doc.status === 'pending' ? until : doc.next_attempt_at };
    try {
      await store.write([{ op: 'cas', coll: COLL, doc: next, expected: doc.version! }]);
    } catch (e) {
      if (!isConflict(e)) throw e;
      if (!again) return null;
      const fresh = await store.get<DeliveryDoc>(COLL, doc.id);
      return fresh && onlyStamped(doc, fresh) ? lease(fresh, now, false) : null;
    }
    return { ...next, version: doc.version! + 1 };
  }

  /** Claims one row by id: due pending rows (nudge), or any row not being attempted (manual retry). */
  async function claimOne(id: string, manual: boolean): Promise<DeliveryDoc | null> {
    if (attempting.has(id)) return null;
    const doc = await store.get<DeliveryDoc>(COLL, id);
    const now = rt.now();
    if (!doc || leaseActive(doc, now)) return null;
    if (!manual && (doc.status !== 'pending' || !doc.next_attempt_at || doc.next_attempt_at > now.toISOString())) return null;
    return lease(doc, now);
  }

  function auditOp(doc: DeliveryDoc, merchant: MerchantState | null, kind: 'delivered' | 'failed' | 'skipped', extra: Record<string, unknown>): WriteOp {
    return {
      op: 'insert', coll: 'audit_events', doc: {
        id: newId('aud'), type: `payment_session.webhook.${kind}`, merchant_id: doc.merchant_id, session_id: doc.session_id,
        event_id: doc.id, event_type: doc.event_type,
        environment: merchant ? (merchant.sandbox ? 'sandbox' : 'live') : null,
        ...extra, created_at: rt.now().toISOString(),
      },
    };
  }

  /**
   * Commits what happened to a leased row, merging onto a newer version if the row changed meanwhile
   * (an attempt that outlived its lease): the log keeps every attempt.
   */
  async function commit(leased: DeliveryDoc, change: (d: DeliveryDoc) => { doc: DeliveryDoc; ops: WriteOp[] }): Promise<DeliveryDoc> {
    let current = leased;
    for (let i = 0; ; i++) {
      const { doc, ops } = change(current);
      try {
        await store.write([{ op: 'cas', coll: COLL, doc, expected: current.version! }, ...ops]);
        return { ...doc, version: current.version! + 1 };
      } catch (e) {
        if (!isConflict(e) || i >= MAX_CAS_RETRIES) throw e;
        const fresh = await store.get<DeliveryDoc>(COLL, leased.id);
        if (!fresh) throw e;
        current = fresh;
      }
    }
  }

  /** One attempt of a leased row, visible to the retry endpoint while it runs. */
  function attempt(leased: DeliveryDoc, manual: boolean, logger: Logger): Promise<DeliveryDoc> {
    const p = attemptLeased(leased, manual, logger).finally(() => attempting.delete(leased.id));
    attempting.set(leased.id, p);
    return p;
  }

  /** Sign, dial, log, reschedule or finish. */
  async function attemptLeased(leased: DeliveryDoc, manual: boolean, logger: Logger): Promise<DeliveryDoc> {
    const merchant = await store.get<MerchantState>('merchants', leased.merchant_id);
    const url = merchant?.webhook_url ?? null;
    if (!url) {
      attemptsTotal.inc({ result: 'skipped' });
      return commit(leased, (d) => d.status === 'pending'
        ? { doc: applySkip(d), ops: [auditOp(d, merchant, 'skipped', { reason: merchant ? 'no_webhook_url' : 'merchant_not_found' })] }
        : { doc: { ...d, lease_until: null }, ops: [] });
    }
    const now = rt.now();
    const secrets = liveSecrets(merchant!, now).map((s) => rt.keyring.open(s.sealed));
    // serialized once: the signature is over exactly these bytes
    const raw = JSON.stringify(leased.body);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      [EVENT_HEADER]: leased.event_type,
      [EVENT_ID_HEADER]: leased.id,
      [SIGNATURE_HEADER]: signatureHeader(raw, secrets, Math.floor(now.getTime() / 1000)),
    };
    const result = await postWebhook(url, raw, headers, { allowPrivate: rt.config.webhookAllowPrivate, timeoutMs: cfg.timeoutMs });
    const logged: LoggedAttempt = {
      at: now.toISOString(), status: result.status, latency_ms: result.latencyMs, error: result.error, ...(manual ? { manual: true } : {}),
    };
    attemptsTotal.inc({ result: result.ok ? 'delivered' : 'failed' });
    latency.observe({ result: result.ok ? 'delivered' : 'failed' }, result.latencyMs / 1000);
    return commit(leased, (d) => {
      const out = applyAttempt(d, logged, result.ok, rt.now(), cfg.retryBaseMs);
      if (!result.ok) {
        const what = `webhook ${leased.id} attempt ${out.doc.attempts.length} failed: ${result.error}${result.status ? ` (HTTP ${result.status})` : ''}`;
        if (out.final) logger.warn(`${what}; retry schedule over, event failed`);
        else logger.info(what);
      }
      return {
        doc: out.doc,
        ops: [auditOp(d, merchant, out.audit, {
          attempt: out.doc.attempts.length, http_status: result.status, error: result.error, latency_ms: result.latencyMs,
          manual, ...(out.audit === 'failed' ? { final: out.final } : {}),
        })],
      };
    });
  }

  /** Runs work in the background, tracked so that stop waits for it; never rejects. */
  function track(id: string, work: () => Promise<unknown>, logger: Logger): Promise<void> {
    const p: Promise<void> = work()
      .then(() => undefined)
      .catch((e) => logger.error(`webhook ${id} delivery error:`, (e as Error).message))
      .finally(() => {
        running.delete(p);
        // refill in batches once half the slots are free, rather than one row at a time
        if (backlog && !scanning && !stopping && running.size <= MAX_IN_FLIGHT / 2) scan(logger).catch((e) => logger.warn('webhook scan failed:', (e as Error).message));
      });
    running.add(p);
    return p;
  }

  async function scan(logger: Logger): Promise<number> {
    if (scanning || stopping) return 0;
    scanning = true;
    try {
      const room = MAX_IN_FLIGHT - running.size;
      if (room <= 0) {
        backlog = true;
        return 0;
      }
      const now = rt.now();
      const rows = await store.claimDue<DeliveryDoc>(COLL, { dueField: 'next_attempt_at', filter: { status: 'pending' }, now, leaseMs, limit: room });
      backlog = rows.length === room;
      for (const row of rows) {
        // the claim pushed next_attempt_at; the lease (a CAS on the claimed version) makes it ours alone
        track(row.id, async () => {
          const leased = await lease(row, now);
          if (leased) await attempt(leased, false, logger);
        }, logger);
      }
      return rows.length;
    } finally {
      scanning = false;
    }
  }

  function nudge(id: string, logger: Logger): Promise<void> {
    if (stopping || running.size >= MAX_IN_FLIGHT || attempting.has(id)) return Promise.resolve();
    return track(id, async () => {
      const leased = await claimOne(id, false);
      if (leased) await attempt(leased, false, logger);
    }, logger);
  }

  function merchantOf(ctx: Context): string {
    const caller = (ctx.meta as Meta).user;
    if (caller?.kind !== 'merchant') throw forbidden();
    return caller.merchant_id;
  }

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
          return present(sessionId, await sessionEvents(sessionId, merchantOf(ctx)));
        },
      },

      /**
       * POST /v1/payment_sessions/{session_id}/webhook/retry: one immediate attempt for each event of
       * the session (or only `event_id`), whatever its status; an event being attempted right now is
       * left to that attempt. Answers with the delivery log after the attempts.
       */
      retry: {
        async handler(ctx: Context<HttpParams>) {
          const body = validate<{ event_id?: string }>('WebhookRetryRequest', ctx.params.body ?? {});
          const sessionId = String(ctx.params.params.session_id);
          const merchantId = merchantOf(ctx);
          let events = await sessionEvents(sessionId, merchantId);
          if (body.event_id !== undefined) {
            events = events.filter((e) => e.id === body.event_id);
            if (events.length === 0) throw notFound('webhook event');
          }
          await Promise.all(events.map((e) => {
            const current = attempting.get(e.id);
            if (current) return current.catch(() => undefined);
            return track(e.id, async () => {
              const leased = await claimOne(e.id, true);
              if (leased) await attempt(leased, true, this.logger);
            }, this.logger);
          }));
          return present(sessionId, await sessionEvents(sessionId, merchantId));
        },
      },

      /** Internal: scan once now (tests, operators). */
      scan: {
        visibility: 'public',
        async handler() {
          const n = await scan(this.logger);
          await Promise.allSettled([...running]);
          return { claimed: n };
        },
      },
    },
    events: {
      /** Sent after a transition committed its outbox row: try at once instead of at the next scan. */
      'webhooks.nudge': {
        handler(ctx: Context<{ event_id?: unknown }>) {
          if (typeof ctx.params?.event_id === 'string') void nudge(ctx.params.event_id, this.logger);
        },
      },
    },
    started() {
      timer = setInterval(() => {
        scan(this.logger).catch((e) => this.logger.warn('webhook scan failed:', (e as Error).message));
      }, cfg.scanIntervalMs);
      timer.unref();
    },
    async stopped() {
      stopping = true;
      if (timer) clearInterval(timer);
      await Promise.allSettled([...running]);
    },
  } as ServiceSchema;
}
