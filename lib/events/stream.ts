/**
 * A Server-Sent Events body over the event feed: polls the store for the merchant's events stamped
 * after a seq (lib/events/feed.ts) and writes each as
 *
 *   id: <stream seq>
 *   event: <event_type>
 *   data: <the event as GET /v1/events shows it>
 *
 * The `id:` is what the client's EventSource sends back as Last-Event-ID when it reconnects, so a stream
 * resumes exactly after the last event the client saw, on any node. Store-backed polling (not Moleculer
 * events, which are at-most-once) is what makes that hold across nodes and restarts; `wake` only shortens
 * the wait when this node knows new seqs exist. A comment line every `heartbeatMs` keeps proxies from
 * closing an idle connection; after `maxMs` the stream ends and the client reconnects with Last-Event-ID,
 * which bounds a poller left behind by a connection that died without a close.
 */
import { Readable } from 'node:stream';
import { presentEvent, type FeedRow } from './feed.ts';

export interface EventStreamOptions {
  /** the merchant's events after a seq, in seq order */
  read(afterSeq: number): Promise<FeedRow[]>;
  /** the seq the stream starts after */
  start: number;
  pollMs: number;
  heartbeatMs: number;
  maxMs: number;
  /** subscribe to "new seqs may exist" hints; returns the unsubscribe */
  wake?: (notify: () => void) => () => void;
  /** reconnection delay suggested to the client */
  retryMs?: number;
  onError?: (e: unknown) => void;
  /** ends the stream cleanly (the node is stopping: the client reconnects elsewhere with Last-Event-ID) */
  signal?: AbortSignal;
}

export function sseFrame(row: FeedRow): string {
  return `id: ${row.stream_seq}\nevent: ${row.event_type}\ndata: ${JSON.stringify(presentEvent(row))}\n\n`;
}

export function eventStream(opts: EventStreamOptions): Readable {
  let cursor = opts.start;
  let closed = false;
  let wakeUp: (() => void) | null = null;
  let readable: (() => void) | null = null;
  let lastWrite = Date.now();
  const startedAt = Date.now();

  const stream = new Readable({
    read() {
      readable?.();
      readable = null;
    },
    destroy(err, cb) {
      closed = true;
      wakeUp?.();
      readable?.();
      cb(err);
    },
  });
  const unsubscribe = opts.wake?.(() => wakeUp?.()) ?? (() => undefined);
  let ending = false;
  const end = () => {
    ending = true;
    wakeUp?.();
    readable?.();
  };
  opts.signal?.addEventListener('abort', end, { once: true });

  /** false when the client is not reading: wait until it is */
  async function write(text: string): Promise<void> {
    lastWrite = Date.now();
    if (!stream.push(text))
      await new Promise<void>((r) => {
        readable = r;
      });
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        wakeUp = null;
        resolve();
      }
      wakeUp = done;
    });

  async function pump(): Promise<void> {
    await write(`retry: ${opts.retryMs ?? 2000}\n: stream of events after ${cursor}\n\n`);
    while (!closed && !ending) {
      if (Date.now() - startedAt >= opts.maxMs) break;
      let rows: FeedRow[] = [];
      try {
        rows = await opts.read(cursor);
      } catch (e) {
        // a store hiccup: keep the connection, try again at the next poll
        opts.onError?.(e);
      }
      for (const row of rows) {
        if (closed || ending) return;
        await write(sseFrame(row));
        cursor = row.stream_seq!;
      }
      if (rows.length > 0) continue;
      if (Date.now() - lastWrite >= opts.heartbeatMs) await write(': keep-alive\n\n');
      await sleep(Math.min(opts.pollMs, opts.heartbeatMs));
    }
  }

  pump()
    .catch((e) => opts.onError?.(e))
    .finally(() => {
      unsubscribe();
      opts.signal?.removeEventListener('abort', end);
      if (!closed) stream.push(null);
    });
  return stream;
}
