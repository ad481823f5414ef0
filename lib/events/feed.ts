/**
 * The merchant's event feed over the webhook outbox (`webhook_events`): every event the service sends or
 * would send, whatever its delivery status (payment sessions today, payouts when they exist).
 *
 * Listing reads rows by id (time-sortable, newest first). Streaming needs more: ids are chosen before the
 * commit, so a row with a smaller id can commit after a reader passed it (another node, a slow write).
 * The sequencer therefore stamps each committed row with `stream_seq`, a number taken from one counter
 * document in the same atomic write (a compare-and-set), so seqs become visible in increasing order and a
 * reader that remembers the last seq it saw (SSE `Last-Event-ID`) misses nothing, on any node, after any
 * restart. Any node may run the sequencer: two passes at once conflict on the counter and one retries.
 */
import type { Doc, Filter, Store, WriteOp } from '../store/port.ts';
import { isConflict, isDuplicate } from '../store/port.ts';
import type { WebhookEventDoc } from '../webhooks/event.ts';
import { limitOf, pageById } from '../core/paging.ts';
import { badRequest, notFound } from '../core/errors.ts';
import type { Checked } from '../http/contract.ts';

export const EVENTS_COLL = 'webhook_events';
export const SEQUENCE_COLL = 'event_sequence';
const COUNTER_ID = 'webhook_events';

/** An outbox row as the feed sees it: the delivered body plus the stream position once sequenced. */
export type FeedRow = WebhookEventDoc & { stream_seq?: number | null };

/**
 * An event as the API shows it: the exact WebhookEvent body that is (or would be) delivered, plus `id`
 * (the X-Service-Event-Id of its deliveries) and `created_at`. Event bodies never use these two names.
 */
export function presentEvent(row: FeedRow): Record<string, unknown> {
  return { id: row.id, created_at: row.created_at, ...row.body };
}

/** The body to sign again (e.g. the CLI's `listen`): the presented event without id and created_at. */
export function bodyOf(event: Record<string, unknown>): Record<string, unknown> {
  const { id: _id, created_at: _created, ...body } = event;
  return body;
}

/** The stream's `type` filter as a test of one row (the same parsing and refusals as the queries). */
export function typeMatcher(raw: string | undefined): (row: FeedRow) => boolean {
  const c = typeCondition(raw).event_type;
  if (c === undefined) return () => true;
  const types = new Set(typeof c === 'string' ? [c] : ((c as { $in: string[] }).$in ?? []));
  return (row) => types.has(row.event_type);
}

export type ListQuery = Checked<'EventListQuery'>;

/** `type` may name several event types separated by commas. */
function typeCondition(raw: string | undefined): Filter {
  if (raw === undefined) return {};
  const types = raw
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (types.length === 0 || types.some((t) => !/^[a-z0-9_]+(\.[a-z_]+)+$/.test(t))) {
    throw badRequest('type must be one or more event types such as payment_session.completed, separated by commas', {
      field: 'type',
      remediation: 'Send type as event types separated by commas, e.g. payment_session.completed,payment_session.expired.',
    });
  }
  return { event_type: types.length === 1 ? types[0] : { $in: types } };
}

/** GET /v1/events: newest first, `limit` 1–100, `cursor` = the previous page's next_cursor. */
export async function listEvents(store: Store, merchantId: string, query: ListQuery) {
  limitOf(query); // a bad limit answers first
  const filter: Filter = { merchant_id: merchantId, ...typeCondition(query.type) };
  if (query.created_after !== undefined) {
    const t = Date.parse(query.created_after);
    if (Number.isNaN(t))
      throw badRequest('created_after must be a date-time such as 2026-01-31T12:00:00Z', {
        field: 'created_after',
        remediation: 'Send created_after as an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z.',
      });
    filter.created_at = { $gt: new Date(t).toISOString() };
  }
  return pageById<FeedRow, ReturnType<typeof presentEvent>>(store, EVENTS_COLL, filter, query, presentEvent);
}

type Counter = Doc & { last: number };

/** GET /v1/events/{event_id}: one of the merchant's events; anyone else's is a 404 like an unknown one. */
export async function getEvent(store: Store, merchantId: string, id: string) {
  const row = /^evt_[0-9a-z]{26}$/.test(id) ? await store.get<FeedRow>(EVENTS_COLL, id) : null;
  if (!row || row.merchant_id !== merchantId) throw notFound('event');
  return presentEvent(row);
}

/** The highest seq handed out so far (0 before the first). */
export async function lastSeq(store: Store): Promise<number> {
  return (await store.get<Counter>(SEQUENCE_COLL, COUNTER_ID))?.last ?? 0;
}

/** rows a pass just stamped, in seq order: seqs `after + 1` … `after + rows.length`, committed */
export type Stamped = (after: number, rows: FeedRow[]) => void;

/**
 * One sequencer pass: stamps up to `limit` unsequenced rows (oldest id first) with the next seqs, the
 * counter and the rows in one atomic write. Returns how many were stamped: 0 when another writer won
 * the race (a row or the counter changed: the next pass tries again), null when nothing was unstamped.
 */
export async function sequencePass(store: Store, limit = 200, onStamped?: Stamped): Promise<number | null> {
  const rows = await store.find<FeedRow>(EVENTS_COLL, { stream_seq: null }, { limit });
  if (rows.length === 0) return null;
  const counter = await store.get<Counter>(SEQUENCE_COLL, COUNTER_ID);
  const last = counter?.last ?? 0;
  const stamped = rows.map((r, i): FeedRow => ({ ...r, stream_seq: last + i + 1 }));
  const ops: WriteOp[] = [
    counter
      ? { op: 'cas', coll: SEQUENCE_COLL, doc: { id: COUNTER_ID, last: last + rows.length }, expected: counter.version! }
      : { op: 'insert', coll: SEQUENCE_COLL, doc: { id: COUNTER_ID, last: rows.length } },
    ...stamped.map((doc, i): WriteOp => ({ op: 'cas', coll: EVENTS_COLL, doc, expected: rows[i].version! })),
  ];
  try {
    await store.write(ops);
  } catch (e) {
    if (isConflict(e) || isDuplicate(e)) return 0;
    throw e;
  }
  onStamped?.(last, stamped);
  return rows.length;
}

/**
 * Runs passes until nothing is left; after a lost race the batch shrinks, so a row that keeps changing
 * (its delivery being committed) cannot hold the others back for long.
 */
export async function sequenceAll(store: Store, maxRounds = 50, onStamped?: Stamped): Promise<number> {
  let total = 0;
  let batch = 200;
  for (let i = 0; i < maxRounds; i++) {
    const n = await sequencePass(store, batch, onStamped);
    if (n === null) break;
    if (n > 0) {
      total += n;
      batch = 200;
      continue;
    }
    batch = Math.max(1, Math.floor(batch / 4));
  }
  return total;
}

/** The merchant's events stamped after `afterSeq`, in stream order. */
export async function readAfter(store: Store, merchantId: string, afterSeq: number, limit = 100, types?: string): Promise<FeedRow[]> {
  return store.find<FeedRow>(
    EVENTS_COLL,
    { merchant_id: merchantId, stream_seq: { $gt: afterSeq }, ...typeCondition(types) },
    { sort: 'stream_seq', limit },
  );
}

/**
 * Where a stream starts: after the Last-Event-ID it is given (a seq, or an `evt_…` id of one of the
 * merchant's events), otherwise after the newest event (only new events are streamed).
 */
export async function startSeq(store: Store, merchantId: string, lastEventId: string | undefined): Promise<number> {
  if (lastEventId === undefined || lastEventId === '') return lastSeq(store);
  if (/^\d{1,15}$/.test(lastEventId)) return Number(lastEventId);
  if (/^evt_[0-9a-z]{26}$/.test(lastEventId)) {
    const row = await store.get<FeedRow>(EVENTS_COLL, lastEventId);
    if (!row || row.merchant_id !== merchantId)
      throw badRequest('Last-Event-ID names no event of yours', {
        field: 'Last-Event-ID',
        remediation: 'Send Last-Event-ID as the id of the last event this stream gave you, or leave it out to start from now.',
      });
    // not stamped yet: everything after the current end is newer than it or it itself
    if (typeof row.stream_seq !== 'number') return lastSeq(store);
    return row.stream_seq;
  }
  throw badRequest('Last-Event-ID must be the id of an event of the stream', {
    field: 'Last-Event-ID',
    remediation: 'Send Last-Event-ID as the id of the last event this stream gave you, or leave it out to start from now.',
  });
}
