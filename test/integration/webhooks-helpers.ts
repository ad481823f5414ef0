/** Shared by the webhook tests: a real HTTP receiver on 127.0.0.1, outbox rows, polling. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookEventOp, type WebhookEventType } from '../../lib/webhooks/event.ts';
import type { DeliveryDoc } from '../../lib/webhooks/delivery.ts';
import type { Store } from '../../lib/store/port.ts';
import { eventually } from '../helpers/wait.ts';

export interface Received {
  path: string;
  raw: string;
  headers: http.IncomingHttpHeaders;
  eventId: string;
  /** the status this receiver answered with */
  answered: number;
}

export type Responder = (req: Received, nthForEvent: number) => number | { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  port: number;
  url: string;
  received: Received[];
  forEvent(id: string): Received[];
  /** requests answered 2xx for this event */
  deliveredCount(id: string): number;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 200, port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        path: req.url ?? '',
        raw: Buffer.concat(chunks).toString('utf8'),
        headers: req.headers,
        eventId: String(req.headers['x-service-event-id'] ?? ''),
        answered: 0,
      };
      const n = received.filter((x) => x.eventId === r.eventId).length + 1;
      received.push(r);
      const answer = respond(r, n);
      if (answer === 'hang') return;
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      r.answered = status;
      res.writeHead(status, headers);
      res.end(status >= 200 && status < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const p = (server.address() as AddressInfo).port;
  return {
    port: p,
    url: `http://127.0.0.1:${p}/hook`,
    received,
    forEvent: (id) => received.filter((r) => r.eventId === id),
    deliveredCount: (id) => received.filter((r) => r.eventId === id && r.answered >= 200 && r.answered < 300).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let seq = 0;

/** Commits an outbox row the way a session transition does; returns the event id. */
export async function commitEvent(
  store: Store,
  merchantId: string,
  opts: { sessionId?: string; type?: WebhookEventType; amount?: number; now?: Date } = {},
): Promise<{ id: string; sessionId: string }> {
  const sessionId = opts.sessionId ?? `ps_test${Date.now()}${seq++}`;
  const type = opts.type ?? 'payment_session.completed';
  const op = webhookEventOp({
    merchant_id: merchantId,
    session_id: sessionId,
    event_type: type,
    status: type.split('.')[1],
    amount: opts.amount ?? 12.5,
    currency: 'USDC',
    chain: 'ethereum',
    network: 'testnet',
    now: opts.now ?? new Date(),
  });
  await store.write([op]);
  return { id: (op as { doc: { id: string } }).doc.id, sessionId };
}

export const getEvent = (store: Store, id: string) => store.get<DeliveryDoc>('webhook_events', id);

export { eventually as waitFor };

export async function waitForEvent(
  store: Store,
  id: string,
  pred: (d: DeliveryDoc) => boolean,
  what = 'the event',
  timeoutMs = 30_000,
): Promise<DeliveryDoc> {
  return eventually(
    what,
    async () => {
      const d = await getEvent(store, id);
      return d && pred(d) ? d : null;
    },
    timeoutMs,
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
