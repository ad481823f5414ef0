/**
 * `payments listen --forward-to <url>`: reads the event stream and POSTs each event to a local URL
 * exactly as the service delivers webhooks: the same body bytes (the event without `id` and
 * `created_at`), Content-Type, X-Service-Event, X-Service-Event-Id and an X-Service-Signature made with
 * the merchant's webhook secret (t=…,v1=…). So a local handler is tested as it will run in production.
 */
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
    const result = await forward(opts.forwardTo, event, opts.secret);
    opts.onForwarded({ event, position, ...result });
  }
}
