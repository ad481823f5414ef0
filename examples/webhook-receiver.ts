/**
 * A merchant's webhook endpoint, the smallest that is correct: it verifies `X-Service-Signature` over the
 * raw body with the SDK (before parsing anything), answers 204, and prints the event. The README's quick
 * start forwards events to it with `payments listen --forward-to http://localhost:4242/hooks`.
 *
 *   eval "$(npx payments env)"            # PAYMENTS_WEBHOOK_SECRET
 *   npx node examples/webhook-receiver.ts [port]
 */
import { createServer } from 'node:http';
import { verifyWebhook } from '@stablecoin-payments/sdk';

const secret = process.env.PAYMENTS_WEBHOOK_SECRET;
if (!secret) {
  console.error('PAYMENTS_WEBHOOK_SECRET is not set: run eval "$(npx payments env)" first');
  process.exit(78);
}
const port = Number(process.argv[2] ?? 4242);

createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    try {
      verifyWebhook(raw, req.headers['x-service-signature'], secret); // 300 s tolerance
    } catch (e) {
      console.log(`refused: ${(e as Error).message}`);
      res.writeHead(400).end();
      return;
    }
    const event = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    // a real handler de-duplicates on X-Service-Event-Id before acting on event.event_type
    console.log(
      `verified ${event.event_type} ${event.session_id ?? event.payout_id} ${event.status} (${req.headers['x-service-event-id']})`,
    );
    res.writeHead(204).end();
  });
}).listen(port, () => console.log(`webhook receiver on http://localhost:${port}/hooks`));
