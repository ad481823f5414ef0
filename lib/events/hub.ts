/**
 * The event hub of a node: one reader of the stamped event feed for all of the node's open streams. When
 * told that new seqs may exist (this node's sequencer stamped rows, another node said so, or the counter
 * moved), it reads the rows after the last seq it delivered ONCE, in seq order, and hands each merchant's
 * rows to that merchant's streams. An idle stream costs no read and no timer but its heartbeat; an event
 * costs one read per node, however many streams are open.
 *
 * Seqs become visible in increasing order (lib/events/feed.ts), so a reader that delivered every row up
 * to seq N and then reads the rows after N misses nothing. The hub reads whether or not a stream is open
 * (it never skips a seq): a stream subscribes first and then reads its own catch-up from the store
 * (lib/events/stream.ts); every row at or below the hub's cursor at that moment was committed before,
 * so the catch-up sees it, and every row above it reaches the stream from the hub. Streams drop the
 * rows they already wrote (by seq).
 */
import type { Store } from '../store/port.ts';
import { EVENTS_COLL, lastSeq, type FeedRow } from './feed.ts';

const PAGE = 500;

export type HubListener = (rows: FeedRow[]) => void;

export class EventHub {
  private cursor: number | null = null;
  private listeners = new Map<string, Set<HubListener>>();
  private running: Promise<void> | null = null;
  private again = false;
  private readonly store: Store;
  private readonly onError: (e: unknown) => void;

  constructor(store: Store, onError: (e: unknown) => void = () => undefined) {
    this.store = store;
    this.onError = onError;
  }

  /** open streams (for metrics and tests) */
  get size(): number {
    let n = 0;
    for (const s of this.listeners.values()) n += s.size;
    return n;
  }

  /** Hands the merchant's new rows to `listener` until the returned function is called. */
  subscribe(merchantId: string, listener: HubListener): () => void {
    let set = this.listeners.get(merchantId);
    if (!set) this.listeners.set(merchantId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(merchantId) === set) this.listeners.delete(merchantId);
    };
  }

  /**
   * Rows this node's sequencer just committed (seqs `after + 1` …): delivered at once, without a read,
   * when they follow the hub's cursor and no read is under way; otherwise the next poke reads them.
   */
  offer(after: number, rows: FeedRow[]): void {
    if (this.running || this.cursor !== after || rows.length === 0) return;
    this.cursor = rows[rows.length - 1].stream_seq!;
    this.fanOut(rows);
  }

  /** New seqs may exist: read and deliver them (one read at a time; a poke during a read reads again). */
  poke(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.deliver();
        } catch (e) {
          // a store hiccup: the cursor stays, the next poke reads the same rows again
          this.onError(e);
        }
      } while (this.again);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async deliver(): Promise<void> {
    if (this.cursor === null) {
      // the first poke (at the service's start, before any stream) places the hub at the end of the feed
      this.cursor = await lastSeq(this.store);
      return;
    }
    for (let after: number = this.cursor; ; after = this.cursor) {
      const rows: FeedRow[] = await this.store.find<FeedRow>(
        EVENTS_COLL,
        { stream_seq: { $gt: after } },
        { sort: 'stream_seq', limit: PAGE },
      );
      if (rows.length === 0) return;
      this.cursor = rows[rows.length - 1].stream_seq!;
      this.fanOut(rows);
      if (rows.length < PAGE) return;
    }
  }

  /** hands each merchant's rows (in seq order) to that merchant's streams */
  private fanOut(rows: FeedRow[]): void {
    const byMerchant = new Map<string, FeedRow[]>();
    for (const r of rows) {
      if (!this.listeners.has(r.merchant_id)) continue;
      let list = byMerchant.get(r.merchant_id);
      if (!list) byMerchant.set(r.merchant_id, (list = []));
      list.push(r);
    }
    for (const [merchantId, list] of byMerchant)
      for (const l of this.listeners.get(merchantId) ?? []) {
        // a stream writes in this turn (lib/events/stream.ts): one that throws must not starve the others
        try {
          l(list);
        } catch (e) {
          this.onError(e);
        }
      }
  }

  /** The seq the hub has delivered up to (null before its first stream): a stream's catch-up reads to here. */
  get delivered(): number | null {
    return this.cursor;
  }
}
