/**
 * A Server-Sent Events body over the event feed: the merchant's events stamped after a seq
 * (lib/events/feed.ts), each written as
 *
 *   id: <stream seq>
 *   event: <event_type>
 *   data: <the event as GET /v1/events shows it>
 *
 * The `id:` is what the client's EventSource sends back as Last-Event-ID when it reconnects, so a stream
 * resumes exactly after the last event the client saw, on any node. Events are pushed: the stream reads
 * the store itself only to catch up (at its start, and when it fell too far behind a slow client); after
 * that the node's hub (lib/events/hub.ts) hands it the merchant's new rows, read once for every stream of
 * the node. An idle stream costs its heartbeat only. A comment line every `heartbeatMs` keeps proxies from
 * closing an idle connection; after `maxMs` the stream ends and the client reconnects with Last-Event-ID.
 *
 * A stream that is caught up and idle writes the hub's rows in the hub's own turn: no wake-up of its pump,
 * no promise, no new heartbeat timer, and a frame encoded once for all of them. With 1,000 streams of one
 * merchant that per-stream machinery cost about a third of the event's fan-out. Such a frame goes straight
 * to the response's socket as an HTTP chunk when nothing of the body waits anywhere (`direct`): the pipe's
 * own machinery was another quarter of it. The pump takes over whenever there is anything to order (a
 * catch-up, a queue, a client that stopped reading).
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { presentEvent, type FeedRow } from './feed.ts';

/** rows waiting for a slow client before the stream drops them and catches up from the store instead */
const MAX_QUEUED = 1000;
/** a failed catch-up read is tried again after this long */
const RETRY_READ_MS = 1000;

export interface EventStreamOptions {
  /** the merchant's events after a seq, in seq order (the catch-up read) */
  read(afterSeq: number): Promise<FeedRow[]>;
  /** the stream's own filter of the rows it is handed (the `type` query) */
  matches(row: FeedRow): boolean;
  /** the seq the stream starts after */
  start: number;
  /** hands the merchant's new rows to `onRows` (the node's hub); returns the unsubscribe */
  subscribe(onRows: (rows: FeedRow[]) => void): () => void;
  heartbeatMs: number;
  maxMs: number;
  /** reconnection delay suggested to the client */
  retryMs?: number;
  onError?: (e: unknown) => void;
  /** ends the stream cleanly (the node is stopping: the client reconnects elsewhere with Last-Event-ID) */
  signal?: AbortSignal;
}

/** one row's frame, encoded once however many streams write it (a string would be encoded per stream) */
const frames = new WeakMap<FeedRow, Buffer>();
export function sseFrame(row: FeedRow): Buffer {
  let f = frames.get(row);
  if (!f) {
    f = Buffer.from(`id: ${row.stream_seq}\nevent: ${row.event_type}\ndata: ${JSON.stringify(presentEvent(row))}\n\n`);
    frames.set(row, f);
  }
  return f;
}

const CRLF = Buffer.from('\r\n');
const chunks = new WeakMap<FeedRow, Buffer>();
/** one row's frame as an HTTP/1.1 chunk (size line, frame, CRLF), built once for every stream that writes it */
export function sseChunk(row: FeedRow): Buffer {
  let c = chunks.get(row);
  if (!c) {
    const f = sseFrame(row);
    c = Buffer.concat([Buffer.from(`${f.length.toString(16)}\r\n`), f, CRLF]);
    chunks.set(row, c);
  }
  return c;
}

/** the body, knowing the HTTP response it is piped into (moleculer-web pipes it): see `direct` */
class SseBody extends Readable {
  sink: ServerResponse | null = null;
  override pipe<T extends NodeJS.WritableStream>(dest: T, o?: { end?: boolean }): T {
    if (dest instanceof ServerResponse) this.sink = dest;
    return super.pipe(dest, o);
  }
}

export function eventStream(opts: EventStreamOptions): Readable {
  let cursor = opts.start;
  let closed = false;
  let wakeUp: (() => void) | null = null;
  let readable: (() => void) | null = null;
  let lastWrite = Date.now();
  const startedAt = Date.now();
  let queued: FeedRow[] = [];
  /** rows were dropped for a slow client (or a read failed): read from the store up to now */
  let behind = true;
  /** the pump sleeps between heartbeats with nothing to order: the hub's rows are written at once */
  let parked = false;
  /** the last push filled the body's buffer: nothing more is pushed until the client reads */
  let full = false;

  const stream = new SseBody({
    read() {
      full = false;
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
  // subscribed before the catch-up read, so that nothing falls between the two (lib/events/hub.ts)
  const unsubscribe = opts.subscribe((rows) => {
    if (parked && !full) {
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        if (row.stream_seq! <= cursor || !opts.matches(row)) continue;
        if (full) {
          // the client stopped reading: the pump waits for it and writes the rest in order
          queued.push(...rows.slice(i));
          wakeUp?.();
          return;
        }
        if (!direct(row)) push(sseFrame(row));
        cursor = row.stream_seq!;
      }
      return;
    }
    if (behind || queued.length + rows.length > MAX_QUEUED) {
      queued = [];
      behind = true;
    } else queued.push(...rows);
    wakeUp?.();
  });
  let ending = false;
  const end = () => {
    ending = true;
    wakeUp?.();
    readable?.();
  };
  opts.signal?.addEventListener('abort', end, { once: true });

  /**
   * Writes the row's chunk straight to the response's socket when nothing of this body waits anywhere (the
   * Readable, the response, the socket's own buffer): the same bytes the pipe would write, without its
   * per-stream machinery (about a quarter of a fan-out's cost per stream). Anything queued takes the pipe.
   */
  function direct(row: FeedRow): boolean {
    const res = stream.sink;
    if (!res || !res.headersSent || !res.chunkedEncoding || res.writableEnded || res.writableNeedDrain) return false;
    const sock = res.socket;
    if (!sock || !sock.writable || stream.readableLength > 0 || res.writableLength > 0) return false;
    lastWrite = Date.now();
    sock.write(sseChunk(row));
    return true;
  }

  function push(chunk: string | Buffer): void {
    lastWrite = Date.now();
    if (!stream.push(chunk)) full = true;
  }

  /** waits while the client is not reading, then pushes */
  async function write(chunk: string | Buffer): Promise<void> {
    while (full && !closed)
      await new Promise<void>((r) => {
        readable = r;
      });
    if (!closed) push(chunk);
  }

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(t);
        wakeUp = null;
        parked = false;
        resolve();
      }
      wakeUp = done;
    });

  async function send(row: FeedRow): Promise<void> {
    if (row.stream_seq! <= cursor) return;
    await write(sseFrame(row));
    cursor = row.stream_seq!;
  }

  /** reads the store after the cursor until nothing is left; false when a read failed */
  async function catchUp(): Promise<boolean> {
    behind = false;
    for (;;) {
      let rows: FeedRow[];
      try {
        rows = await opts.read(cursor);
      } catch (e) {
        opts.onError?.(e);
        behind = true;
        return false;
      }
      for (const row of rows) {
        if (closed || ending) return true;
        await send(row);
      }
      if (rows.length === 0) return true;
    }
  }

  async function pump(): Promise<void> {
    await write(`retry: ${opts.retryMs ?? 2000}\n: stream of events after ${cursor}\n\n`);
    while (!closed && !ending) {
      const left = opts.maxMs - (Date.now() - startedAt);
      if (left <= 0) break;
      if (behind) {
        if (!(await catchUp())) await sleep(Math.min(RETRY_READ_MS, left));
        continue;
      }
      if (queued.length) {
        const rows = queued;
        queued = [];
        for (const row of rows) {
          if (closed || ending || behind) break;
          if (opts.matches(row)) await send(row);
        }
        continue;
      }
      const quiet = Date.now() - lastWrite;
      if (quiet >= opts.heartbeatMs) {
        await write(': keep-alive\n\n');
        continue;
      }
      parked = true;
      await sleep(Math.min(opts.heartbeatMs - quiet, left));
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
