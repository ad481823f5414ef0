/**
 * A Server-Sent Events reader for `GET /v1/events/stream` on fetch (Node 18+ and browsers alike; the
 * browser's EventSource cannot send X-API-Key). It reconnects by itself with Last-Event-ID, so a caller
 * sees every event once, in stream order, across dropped connections and restarted nodes.
 */
import { NetworkError, PaymentsError } from './errors.ts';
import type { components } from './generated/schema.ts';

export type Event = components['schemas']['Event'];

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
  /** a `retry:` field, if the message had one */
  retry?: number;
}

/** Parses an SSE byte stream into messages (comments and empty data are skipped; ids persist as the spec says). */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event = '';
  let id: string | null = null;
  let retry: number | undefined;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n'), ...(retry !== undefined ? { retry } : {}) };
          data = [];
          event = '';
          retry = undefined;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'event') event = value;
        else if (field === 'id' && !value.includes('\0')) id = value;
        else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export interface StreamOptions {
  baseUrl: string;
  apiKey: string;
  /** resume after this stream position (or evt_ id); default: only new events */
  lastEventId?: string;
  /** only these event types (comma-separated) */
  type?: string;
  /** ends the stream */
  signal?: AbortSignal;
  /** reconnect when the connection ends or fails (default true) */
  reconnect?: boolean;
  /** delay before a reconnect, grown ×2 up to 30 s while connections keep failing (default 1 s) */
  retryMs?: number;
  fetch?: typeof fetch;
  /** called after each (re)connection with the position it resumes from */
  onConnect?: (lastEventId: string | undefined) => void;
  /** called when a connection fails and will be retried */
  onError?: (error: unknown) => void;
}

export interface StreamedEvent {
  /** the stream position: pass it as lastEventId to resume after this event */
  position: string;
  event: Event;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The merchant's events as they commit; ends when `signal` aborts (or, with reconnect false, when the connection ends). */
export async function* streamEvents(opts: StreamOptions): AsyncGenerator<StreamedEvent> {
  const doFetch = opts.fetch ?? globalThis.fetch;
  let last = opts.lastEventId;
  let delay = opts.retryMs ?? 1000;
  const reconnect = opts.reconnect ?? true;
  while (!opts.signal?.aborted) {
    const url = new URL('/v1/events/stream', opts.baseUrl);
    if (opts.type) url.searchParams.set('type', opts.type);
    const headers: Record<string, string> = { 'X-API-Key': opts.apiKey, Accept: 'text/event-stream' };
    if (last) headers['Last-Event-ID'] = last;
    try {
      const res = await doFetch(url, { headers, signal: opts.signal }).catch((e: unknown) => {
        throw opts.signal?.aborted ? e : NetworkError.unreachable('GET', url, e);
      });
      if (!res.ok || !res.body) {
        const err = await PaymentsError.fromResponse(res);
        // credentials or a bad request will not get better by retrying
        if (res.status < 500 && res.status !== 429) throw err;
        throw Object.assign(err, { retryable: true });
      }
      opts.onConnect?.(last);
      delay = opts.retryMs ?? 1000;
      for await (const msg of parseSse(res.body)) {
        if (msg.retry !== undefined && opts.retryMs === undefined) delay = msg.retry;
        if (!msg.id) continue;
        last = msg.id;
        yield { position: msg.id, event: JSON.parse(msg.data) as Event };
      }
    } catch (e) {
      if (opts.signal?.aborted) return;
      if (e instanceof PaymentsError && !(e as PaymentsError & { retryable?: boolean }).retryable) throw e;
      if (!reconnect) throw e;
      opts.onError?.(e);
      await sleep(delay, opts.signal);
      delay = Math.min(delay * 2, 30_000);
      continue;
    }
    if (!reconnect) return;
  }
}
