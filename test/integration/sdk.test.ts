/**
 * The merchant path through the SDK (sdk/) against a started node: register (email code over a real
 * SMTP receiver, proof of work on a worker thread), create a session (automatic Idempotency-Key),
 * simulate, receive and verify the signed webhook, read the events (list and stream), typed errors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { eventually } from '../helpers/wait.ts';
import {
  createPaymentsClient,
  register,
  verifyWebhook,
  WebhookVerificationError,
  NotFoundError,
  BadRequestError,
  ConflictError,
  AuthenticationError,
  PaymentsError,
  type RegistrationStep,
} from '../../sdk/src/node.ts';

const ETH_USDC = { methodID: 0 as const, chain: 'ethereum', network: 'testnet' as const, token: 'USDC' };

interface Hook {
  raw: string;
  signature: string;
  eventId: string;
  verified: boolean;
  reason?: string;
}

function startHookServer(secret: () => string) {
  const hooks: Hook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const signature = String(req.headers['x-service-signature'] ?? '');
      let verified = false;
      let reason: string | undefined;
      try {
        verified = verifyWebhook(raw, signature, [secret()]);
      } catch (e) {
        reason = (e as WebhookVerificationError).reason;
      }
      hooks.push({ raw: raw.toString('utf8'), signature, eventId: String(req.headers['x-service-event-id']), verified, reason });
      res.writeHead(verified ? 204 : 400);
      res.end();
    });
  });
  return {
    hooks,
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`)),
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('the merchant path through the SDK', () => {
  let smtp: SmtpReceiver;
  let t: TestNode;
  let secret = '';
  const hookServer = startHookServer(() => secret);
  let hookUrl = '';

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    hookUrl = await hookServer.start();
    t = await startTestNode({
      SMTP_URL: smtp.url,
      TRUSTED_EMAIL_DOMAINS: 'shop.test',
      POW_DIFFICULTY: '12',
      EVENTS_POLL_INTERVAL_MS: '50',
      RATE_LIMIT_PER_MINUTE: '10000',
    });
  });
  afterAll(async () => {
    await t.stop();
    await smtp.stop();
    await hookServer.stop();
  });

  it('registers, creates and simulates a session, verifies the webhook, reads the events', async () => {
    const steps: RegistrationStep[] = [];
    const progress: number[] = [];
    const email = `owner${Date.now()}@shop.test`;
    const merchant = await register({
      baseUrl: t.url,
      email,
      name: 'SDK Shop',
      webhookUrl: hookUrl,
      getCode: ({ email: to }) => smtp.waitForCode(to),
      onStep: (s) => steps.push(s),
      onProgress: (p) => progress.push(p.tried),
    });
    expect(steps).toEqual(['email_verification', 'confirm', 'proof_of_work', 'register']);
    expect(merchant.api_key).toMatch(/^service_sk_test_/);
    expect(merchant.webhook_url).toBe(hookUrl);
    secret = merchant.webhook_secret!;

    // every request the client makes, as sent
    const sent: Request[] = [];
    const client = createPaymentsClient({
      baseUrl: t.url,
      apiKey: merchant.api_key,
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        sent.push(req.clone());
        return fetch(req);
      },
    });
    expect((await client.me()).id).toBe(merchant.id);
    expect((await client.paymentMethods()).some((r) => r.chain === 'ethereum' && r.token === 'USDC')).toBe(true);

    const session = await client.sessions.create({ amount: 2.5, expires_in: '1h', paymentMethod: ETH_USDC, metadata: { order: 'A-1' } });
    expect(session).toMatchObject({ status: 'pending', expected_amount: 2.5, merchant_id: merchant.id });
    const createReq = sent.find((r) => r.method === 'POST' && new URL(r.url).pathname === '/v1/payment_sessions')!;
    expect(createReq.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(createReq.headers.get('x-api-key')).toBe(merchant.api_key);
    // an explicit key replays the same session; the same key with another body is a typed conflict
    const again1 = await client.sessions.create({ amount: 1, expires_in: '1h', paymentMethod: ETH_USDC }, { idempotencyKey: 'order-42' });
    const again2 = await client.sessions.create({ amount: 1, expires_in: '1h', paymentMethod: ETH_USDC }, { idempotencyKey: 'order-42' });
    expect(again2.session_id).toBe(again1.session_id);
    await expect(
      client.sessions.create({ amount: 2, expires_in: '1h', paymentMethod: ETH_USDC }, { idempotencyKey: 'order-42' }),
    ).rejects.toMatchObject({ constructor: ConflictError, code: 5, status: 409 });

    const stream = client.events.stream();
    const firstStreamed = stream.next();
    // let the stream connect before the event exists, so it is a new event for it
    await eventually('stream connected', () => sent.length > 0 && true);
    await new Promise((r) => setTimeout(r, 300));

    const done = await client.sessions.simulate(session.session_id);
    expect(done.status).toBe('completed');
    const hook = await eventually('the webhook', () => hookServer.hooks.find((h) => JSON.parse(h.raw).session_id === session.session_id));
    expect(hook.verified).toBe(true);
    expect(JSON.parse(hook.raw)).toMatchObject({
      event_type: 'payment_session.completed',
      session_id: session.session_id,
      status: 'completed',
      amount: 2.5,
    });
    // a wrong secret or a changed body is refused with a reason
    expect(() => verifyWebhook(hook.raw, hook.signature, ['whsec_wrong'])).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(hook.raw.replace('2.5', '25'), hook.signature, secret)).toThrow(/no v1 signature/);
    // rotation: the old and the new secret both verify
    expect(verifyWebhook(hook.raw, hook.signature, ['whsec_new_one', secret])).toBe(true);

    const streamed = await firstStreamed;
    expect(streamed.value!.event).toMatchObject({
      id: hook.eventId,
      session_id: session.session_id,
      event_type: 'payment_session.completed',
    });
    await stream.return(undefined);

    const events = await client.events.list({ type: 'payment_session.completed' });
    expect(events.data.map((e) => e.id)).toEqual([hook.eventId]);
    const { id: _id, created_at: _c, ...body } = events.data[0];
    expect(JSON.stringify(body)).toBe(hook.raw);
    const all: string[] = [];
    for await (const e of client.events.all({ limit: 1 })) all.push(e.id);
    expect(all).toEqual([hook.eventId]);

    const log = await client.sessions.webhooks(session.session_id);
    expect(log.events[0].status).toBe('delivered');
    const listed = await client.sessions.list({ limit: 2 });
    expect(listed.data.map((s) => s.session_id)).toEqual([again1.session_id, session.session_id]);
    expect(listed.has_more).toBe(false);
    expect((await client.sessions.list({ status: 'completed' })).data.map((s) => s.session_id)).toEqual([session.session_id]);

    // typed errors carry the envelope's code
    await expect(client.sessions.get('ps_00000000000000000000000000')).rejects.toMatchObject({
      constructor: NotFoundError,
      code: 2,
      status: 404,
    });
    await expect(client.sessions.create({ amount: 1, expires_in: 'soon', paymentMethod: ETH_USDC })).rejects.toMatchObject({
      constructor: BadRequestError,
      code: 3,
    });
    const anonymous = createPaymentsClient({ baseUrl: t.url, apiKey: 'service_sk_test_not_a_key' });
    const err = await anonymous.me().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toBeInstanceOf(PaymentsError);
    expect(err).toMatchObject({ code: 7, status: 401, message: 'missing or invalid authorization header' });
  });
});
