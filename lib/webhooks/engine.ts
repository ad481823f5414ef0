/**
 * The webhook delivery engine: delivers outbox rows (`webhook_events`) from the store, on every node.
 * No broker in here; services/webhooks.service.ts exposes it (log, retry, scan, nudge).
 *
 * - A session transition and its outbox row are one atomic write (the session actor's effects); the
 *   engine delivers from the store, so a node dying after the commit loses nothing: the row stays
 *   `pending` and any node's scanner delivers it.
 * - The scanner (lib/core/due-scanner.ts) claims due rows (store.claimDue pushes `next_attempt_at` by a
 *   lease), as many as there are free slots, then each row is marked with `lease_until` by
 *   compare-and-set before dialling; `nudge(id)` claims one row the same way at once, once the event
 *   sequencer has stamped it (`events.sequenced`, at most SEQUENCE_WAIT_MS later). A row is attempted
 *   by one node at a time; every status change is a compare-and-set on the row's version, and the lease
 *   outlasts the attempt's deadline.
 * - Exactly once per event id in the store's sense (one `delivered`); a receiver may still see a repeat
 *   when a node dies after the receiver answered 2xx but before the outcome was committed, so every
 *   request carries a stable X-Service-Event-Id to de-duplicate on.
 * - Only 2xx is success; 3xx (never followed), 4xx, 5xx, time-outs and refused targets are failures,
 *   retried on the schedule of lib/webhooks/delivery.ts for 72 h, then `failed`.
 * - Audit (lib/core/audit.ts): `payment_session.webhook.delivered` (`payout.webhook.…` for payout events) per delivery, `.failed` per failed
 *   attempt (with `final: true` on the one that ends the schedule), `.skipped` when the merchant has no
 *   webhook_url; each in the same write as the row's change.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { perRegistry } from '../runtime/metrics.ts';
import { auditOp } from '../core/audit.ts';
import { DueScanner } from '../core/due-scanner.ts';
import type { Keyring } from '../core/keyring.ts';
import { retryOnConflict } from '../core/retry.ts';
import { VersionConflictError, isConflict, type Store, type WriteOp } from '../store/port.ts';
import { liveSecrets, type MerchantState } from '../merchants/merchant.ts';
import { EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.ts';
import { postWebhook, type DialResult } from './dialer.ts';
import { applyAttempt, applySkip, type DeliveryDoc, type LoggedAttempt } from './delivery.ts';

export const WEBHOOK_EVENTS = 'webhook_events';
const COLL = WEBHOOK_EVENTS;
/** rows attempted at once by one node */
const MAX_IN_FLIGHT = 32;
/** optimistic retries of the final write when the row changed meanwhile */
const MAX_CAS_RETRIES = 5;
/**
 * How long a nudged row waits for the event sequencer's stamp before it is attempted anyway (a lost
 * `events.sequenced` word, a sequencer that is down): the sequencer's stamp is a compare-and-set on the
 * same row, so a claim written before it made the sequencer lose, reload and decide again (twice per
 * event, ~2 ms on the way to the event streams); claiming after the stamp, neither invalidates the other.
 */
export const SEQUENCE_WAIT_MS = 1000;
export const USER_AGENT = 'StablecoinPaymentService-Webhooks/1';

export type Logger = { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };

export interface WebhookDeliveryOptions {
  store: Store;
  config: { scanIntervalMs: number; timeoutMs: number; retryBaseMs: number };
  /** WEBHOOK_ALLOW_PRIVATE */
  allowPrivate: boolean;
  keyring: Keyring;
  registry: Registry;
  now: () => Date;
  log: Logger;
  /** after an attempt's outcome is committed (alerts count attempts per merchant) */
  onAttempt?: (row: DeliveryDoc, merchant: MerchantState, result: DialResult) => Promise<unknown>;
  /** whether an event sequencer (lib/events/feed.ts) runs somewhere: a nudged row waits for its stamp first */
  sequencerRuns?: () => boolean;
}

export interface WebhookDelivery {
  /** one scan now; resolves when the rows it claimed were attempted */
  scanNow(): Promise<number>;
  /** `webhooks.nudge`: try this row at once (once it is sequenced) instead of at the next scan */
  nudge(id: string): Promise<void>;
  /** `events.sequenced`: rows were stamped, the nudged rows that wait for their stamp go now */
  sequenced(): void;
  /** one immediate (manual) attempt of each row, whatever its status; a row being attempted is left to that attempt */
  redeliver(ids: string[]): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

const deliveryMetrics = perRegistry((registry: Registry) => ({
  attempts: new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by result',
    labelNames: ['result'],
    registers: [registry],
  }),
  latency: new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Duration of webhook delivery attempts (DNS, connect, response headers)',
    labelNames: ['result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  }),
}));

/** the rows are equal but for the event sequencer's stream_seq and the version */
const onlyStamped = (a: DeliveryDoc, b: DeliveryDoc) => {
  const strip = ({ version: _v, stream_seq: _s, ...rest }: DeliveryDoc & { stream_seq?: unknown }) => JSON.stringify(rest);
  return strip(a) === strip(b);
};
const unstamped = (d: DeliveryDoc) => (d as DeliveryDoc & { stream_seq?: unknown }).stream_seq == null;
const leaseActive = (d: DeliveryDoc, now: Date) => typeof d.lease_until === 'string' && d.lease_until > now.toISOString();

/** Marks a row as being attempted by this node until `leaseMs` from now; null when somebody else changed it first. */
async function leaseRow(store: Store, doc: DeliveryDoc, now: Date, leaseMs: number, again = true): Promise<DeliveryDoc | null> {
  const until = new Date(now.getTime() + leaseMs).toISOString();
  const next: DeliveryDoc = { ...doc, lease_until: until, next_attempt_at: doc.status === 'pending' ? until : doc.next_attempt_at };
  try {
    await store.write([{ op: 'cas', coll: COLL, doc: next, expected: doc.version! }]);
  } catch (e) {
    if (!isConflict(e)) throw e;
    // a change that only stamped the row's event-stream position (lib/events/feed.ts) is not a claim
    if (!again) return null;
    const fresh = await store.get<DeliveryDoc>(COLL, doc.id);
    return fresh && onlyStamped(doc, fresh) ? leaseRow(store, fresh, now, leaseMs, false) : null;
  }
  return { ...next, version: doc.version! + 1 };
}

/**
 * Commits what happened to a leased row, merging onto a newer version if the row changed meanwhile
 * (an attempt that outlived its lease): the log keeps every attempt.
 */
async function commitRow(
  store: Store,
  leased: DeliveryDoc,
  change: (d: DeliveryDoc) => { doc: DeliveryDoc; ops: WriteOp[] },
): Promise<DeliveryDoc> {
  let current = leased;
  return retryOnConflict(
    async (attempt) => {
      if (attempt > 1) {
        const fresh = await store.get<DeliveryDoc>(COLL, leased.id);
        if (!fresh) throw new Error(`webhook ${leased.id} is gone`);
        current = fresh;
      }
      const { doc, ops } = change(current);
      await store.write([{ op: 'cas', coll: COLL, doc, expected: current.version! }, ...ops]);
      return { ...doc, version: current.version! + 1 };
    },
    { attempts: MAX_CAS_RETRIES + 1, maxPauseMs: () => 0, exhausted: () => new VersionConflictError(COLL, leased.id) },
  );
}

function auditOf(
  doc: DeliveryDoc,
  merchant: MerchantState | null,
  kind: 'delivered' | 'failed' | 'skipped',
  extra: Record<string, unknown>,
  at: Date,
): WriteOp {
  // payout, refund and x402 events share the outbox; their audit names the payout, refund or challenge
  const payoutId = (doc as { payout_id?: string }).payout_id;
  const refundId = (doc as { refund_id?: string }).refund_id;
  const challengeId = (doc as { challenge_id?: string }).challenge_id;
  return auditOp(
    `${payoutId ? 'payout' : refundId ? 'refund' : challengeId ? 'x402' : 'payment_session'}.webhook.${kind}`,
    {
      merchant_id: doc.merchant_id,
      ...(payoutId
        ? { payout_id: payoutId }
        : refundId
          ? { refund_id: refundId, session_id: doc.session_id }
          : challengeId
            ? { challenge_id: challengeId }
            : { session_id: doc.session_id }),
      event_id: doc.id,
      event_type: doc.event_type,
      environment: merchant ? (merchant.sandbox ? 'sandbox' : 'live') : null,
      ...extra,
    },
    at,
  );
}

/** The request of one attempt: the body serialized once, signed with every live secret of the merchant. */
function signedRequest(
  row: DeliveryDoc,
  merchant: MerchantState,
  keyring: Keyring,
  now: Date,
): { raw: string; headers: Record<string, string> } {
  const secrets = liveSecrets(merchant, now).map((s) => keyring.open(s.sealed));
  // the signature is over exactly these bytes
  const raw = JSON.stringify(row.body);
  return {
    raw,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': USER_AGENT,
      [EVENT_HEADER]: row.event_type,
      [EVENT_ID_HEADER]: row.id,
      [SIGNATURE_HEADER]: signatureHeader(raw, secrets, Math.floor(now.getTime() / 1000)),
    },
  };
}

/** Sign, dial, log, reschedule or finish. */
async function attemptRow(
  o: WebhookDeliveryOptions,
  metrics: ReturnType<typeof deliveryMetrics>,
  leased: DeliveryDoc,
  manual: boolean,
): Promise<DeliveryDoc> {
  const { store, log: logger } = o;
  const merchant = await store.get<MerchantState>('merchants', leased.merchant_id);
  const url = merchant?.webhook_url ?? null;
  if (!url) {
    metrics.attempts.inc({ result: 'skipped' });
    return commitRow(store, leased, (d) =>
      d.status === 'pending'
        ? {
            doc: applySkip(d),
            ops: [auditOf(d, merchant, 'skipped', { reason: merchant ? 'no_webhook_url' : 'merchant_not_found' }, o.now())],
          }
        : { doc: { ...d, lease_until: null }, ops: [] },
    );
  }
  const now = o.now();
  const { raw, headers } = signedRequest(leased, merchant!, o.keyring, now);
  const result = await postWebhook(url, raw, headers, { allowPrivate: o.allowPrivate, timeoutMs: o.config.timeoutMs });
  const logged: LoggedAttempt = {
    at: now.toISOString(),
    status: result.status,
    latency_ms: result.latencyMs,
    error: result.error,
    ...(manual ? { manual: true } : {}),
  };
  metrics.attempts.inc({ result: result.ok ? 'delivered' : 'failed' });
  metrics.latency.observe({ result: result.ok ? 'delivered' : 'failed' }, result.latencyMs / 1000);
  const committed = await commitRow(store, leased, (d) => {
    const out = applyAttempt(d, logged, result.ok, o.now(), o.config.retryBaseMs);
    if (!result.ok) {
      const what = `webhook ${leased.id} attempt ${out.doc.attempts.length} failed: ${result.error}${result.status ? ` (HTTP ${result.status})` : ''}`;
      if (out.final) logger.warn(`${what}; retry schedule over, event failed`);
      else logger.info(what);
    }
    return {
      doc: out.doc,
      ops: [
        auditOf(
          d,
          merchant,
          out.audit,
          {
            attempt: out.doc.attempts.length,
            http_status: result.status,
            error: result.error,
            latency_ms: result.latencyMs,
            manual,
            ...(out.audit === 'failed' ? { final: out.final } : {}),
          },
          o.now(),
        ),
      ],
    };
  });
  if (o.onAttempt) await o.onAttempt(leased, merchant!, result);
  return committed;
}

export function createWebhookDelivery(o: WebhookDeliveryOptions): WebhookDelivery {
  const { store, log: logger } = o;
  const cfg = o.config;
  /** longer than any attempt (its deadline is timeoutMs) plus the writes around it */
  const leaseMs = cfg.timeoutMs * 2 + 5_000;
  /** every background attempt of this node (capacity, and stop waits for them) */
  const running = new Set<Promise<void>>();
  /** rows this node holds the lease of, by id: the retry endpoint waits for these */
  const attempting = new Map<string, Promise<DeliveryDoc>>();
  let stopping = false;
  /** the last scan filled every free slot: more rows may be due, claim again as slots free up */
  let backlog = false;

  const metrics = deliveryMetrics(o.registry);
  const lease = (doc: DeliveryDoc, now: Date) => leaseRow(store, doc, now, leaseMs);

  /** Claims one row by id: due pending rows (nudge), or any row not being attempted (manual retry). */
  async function claimOne(id: string, manual: boolean): Promise<DeliveryDoc | null> {
    if (attempting.has(id)) return null;
    return claimRead(await store.get<DeliveryDoc>(COLL, id), manual);
  }

  /** claimOne of a row just read */
  async function claimRead(doc: DeliveryDoc | null, manual: boolean): Promise<DeliveryDoc | null> {
    const now = o.now();
    if (!doc || leaseActive(doc, now)) return null;
    if (!manual && (doc.status !== 'pending' || !doc.next_attempt_at || doc.next_attempt_at > now.toISOString())) return null;
    return lease(doc, now);
  }

  /** One attempt of a leased row, visible to the retry endpoint while it runs. */
  function attempt(leased: DeliveryDoc, manual: boolean): Promise<DeliveryDoc> {
    const p = attemptRow(o, metrics, leased, manual).finally(() => attempting.delete(leased.id));
    attempting.set(leased.id, p);
    return p;
  }

  /** Runs work in the background, tracked so that stop waits for it; never rejects. */
  function track(id: string, work: () => Promise<unknown>): Promise<void> {
    const p: Promise<void> = work()
      .then(() => undefined)
      .catch((e) => logger.error(`webhook ${id} delivery error:`, (e as Error).message))
      .finally(() => {
        running.delete(p);
        // refill in batches once half the slots are free, rather than one row at a time
        if (backlog && !scanner.isRunning && !stopping && running.size <= MAX_IN_FLIGHT / 2)
          scan().catch((e) => logger.warn('webhook scan failed:', (e as Error).message));
      });
    running.add(p);
    return p;
  }

  const scanner = new DueScanner<DeliveryDoc>({
    name: 'webhook delivery',
    store,
    coll: COLL,
    dueField: 'next_attempt_at',
    filter: { status: 'pending' },
    leaseMs,
    intervalMs: cfg.scanIntervalMs,
    now: o.now,
    log: logger,
    drain: false,
    room: () => (stopping ? 0 : MAX_IN_FLIGHT - running.size),
    // every free slot filled (or none free): more rows may be due, claim again as slots free up
    onClaim: (claimed, limit) => {
      backlog = claimed === limit;
    },
    // the claim pushed next_attempt_at; the lease (a CAS on the claimed version) makes it ours alone.
    // Attempts run in the background (bounded by room), so a scan never waits for a slow receiver.
    async handle(row, now) {
      void track(row.id, async () => {
        const leased = await lease(row, now);
        if (leased) await attempt(leased, false);
      });
    },
  });

  const scan = () => scanner.scanOnce();

  /** nudged rows waiting for their stamp: id -> when they go anyway (ms) */
  const waiting = new Map<string, number>();
  let waitTimer: NodeJS.Timeout | null = null;
  /** counts `events.sequenced` words: one that arrives while a row is read is not missed */
  let words = 0;

  function wait(id: string, until: number) {
    waiting.set(id, until);
    if (waitTimer) return;
    waitTimer = setTimeout(
      () => {
        waitTimer = null;
        resume();
      },
      Math.max(0, Math.min(...waiting.values()) - Date.now()),
    );
    waitTimer.unref();
  }

  /** nudges the waiting rows again: stamped ones (and those past their wait) are attempted, the others wait on */
  function resume() {
    const rows = [...waiting];
    waiting.clear();
    for (const [id, until] of rows) void nudge(id, until);
  }

  function nudge(id: string, until?: number): Promise<void> {
    if (stopping || running.size >= MAX_IN_FLIGHT || attempting.has(id)) return Promise.resolve();
    return track(id, async () => {
      const word = words;
      const doc = attempting.has(id) ? null : await store.get<DeliveryDoc>(COLL, id);
      // the sequencer stamps first (see SEQUENCE_WAIT_MS); a row it has not seen yet waits for its word
      if (doc && doc.status === 'pending' && unstamped(doc) && o.sequencerRuns?.()) {
        const deadline = until ?? Date.now() + SEQUENCE_WAIT_MS;
        if (Date.now() < deadline && !stopping) {
          wait(id, deadline);
          if (word !== words) resume();
          return;
        }
      }
      const leased = await claimRead(doc, false);
      if (leased) await attempt(leased, false);
    });
  }

  return {
    async scanNow() {
      const n = await scan();
      await Promise.allSettled([...running]);
      return n;
    },
    nudge: (id) => nudge(id),
    sequenced() {
      words++;
      if (waiting.size > 0) resume();
    },
    async redeliver(ids) {
      await Promise.all(
        ids.map((id) => {
          const current = attempting.get(id);
          if (current) return current.catch(() => undefined);
          return track(id, async () => {
            const leased = await claimOne(id, true);
            if (leased) await attempt(leased, true);
          });
        }),
      );
    },
    start() {
      stopping = false;
      scanner.start();
    },
    async stop() {
      stopping = true;
      if (waitTimer) clearTimeout(waitTimer);
      waitTimer = null;
      // a waiting row is still pending and due: the next scan on any node takes it
      waiting.clear();
      await scanner.stop();
      await Promise.allSettled([...running]);
    },
  };
}
