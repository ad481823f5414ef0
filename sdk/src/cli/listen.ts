/**
 * `payments listen --forward-to <url>`: reads the event stream and POSTs each event to a local URL
 * exactly as the service delivers webhooks: the same body bytes (the event without `id` and
 * `created_at`), Content-Type, X-Service-Event, X-Service-Event-Id and an X-Service-Signature made with
 * the merchant's webhook secret (t=…,v1=…). So a local handler is tested as it will run in production.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PaymentsClient, Event } from '../client.ts';
import { EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from '../webhooks.ts';

export interface Forwarded {
  event: Event;
  position: string;
  status: number | null;
  error?: string;
}

/** The body the service signs and sends for an event of the API. */
export function webhookBody(event: Event): string {
  const { id: _id, created_at: _created, ...body } = event;
  return JSON.stringify(body);
}

export async function forward(
  url: string,
  event: Event,
  secret: string,
  fetchImpl: typeof fetch = fetch,
): Promise<{ status: number | null; error?: string }> {
  const raw = webhookBody(event);
  try {
    const res = await fetchImpl(url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'payments-cli/1 (listen)',
        [EVENT_HEADER]: String(event.event_type),
        [EVENT_ID_HEADER]: event.id,
        [SIGNATURE_HEADER]: signatureHeader(raw, secret),
      },
      body: raw,
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return { status: res.status };
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause;
    return { status: null, error: cause?.code ?? (e as Error).name ?? 'error' };
  }
}

/**
 * Waits before each new try of a forward the endpoint refused (about a minute in all). A refused
 * connection never reached the handler, so trying again cannot deliver twice; it is what happens when
 * `listen` starts before the local endpoint does, as it may in the README's quick start.
 */
export const REFUSED_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000];

/** forward(), tried again after the delays while the endpoint refuses the connection. */
export async function forwardRetryingRefused(
  url: string,
  event: Event,
  secret: string,
  opts: { signal: AbortSignal; onRetry: (delayMs: number) => void; delaysMs?: readonly number[]; fetchImpl?: typeof fetch },
): Promise<{ status: number | null; error?: string }> {
  let result = await forward(url, event, secret, opts.fetchImpl);
  for (const delayMs of opts.delaysMs ?? REFUSED_RETRY_DELAYS_MS) {
    if (result.error !== 'ECONNREFUSED' || opts.signal.aborted) break;
    opts.onRetry(delayMs);
    try {
      await sleep(delayMs, undefined, { signal: opts.signal });
    } catch {
      break; // stopped (Ctrl-C)
    }
    result = await forward(url, event, secret, opts.fetchImpl);
  }
  return result;
}

export async function listen(
  client: PaymentsClient,
  opts: {
    forwardTo: string;
    secret: string;
    type?: string;
    lastEventId?: string;
    signal: AbortSignal;
    onReady: () => void;
    onForwarded: (f: Forwarded) => void;
    onReconnect: (e: unknown) => void;
    /** the endpoint refused the connection; the same event is tried again after delayMs */
    onRefused: (event: Event, delayMs: number) => void;
  },
): Promise<void> {
  let ready = false;
  const stream = client.events.stream({
    type: opts.type,
    lastEventId: opts.lastEventId,
    signal: opts.signal,
    onConnect: () => {
      if (!ready) opts.onReady();
      ready = true;
    },
    onError: opts.onReconnect,
  });
  for await (const { event, position } of stream) {
    const result = await forwardRetryingRefused(opts.forwardTo, event, opts.secret, {
      signal: opts.signal,
      onRetry: (delayMs) => opts.onRefused(event, delayMs),
    });
    opts.onForwarded({ event, position, ...result });
  }
}
