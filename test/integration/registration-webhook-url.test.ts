/**
 * A webhook_url the service would refuse at registration is refused at step 1, before a code is sent or
 * counted: the newcomer who types `http://localhost…` learns it at once, not after the email and the proof
 * of work, and keeps the email's codes (the SDK and CLI send the URL with step 1).
 */
import { register, BadRequestError } from '../../sdk/src/index.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

describe('webhook_url checked at the first registration step', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({
      WEBHOOK_ALLOW_PRIVATE: 'false',
      REGISTRATION_EMAIL_LIMIT_PER_HOUR: '1',
      TRUSTED_EMAIL_DOMAINS: 'shop.example',
    });
  });
  afterAll(async () => {
    await t.stop();
  });
  const start = (body: Record<string, unknown>) => t.request('POST', '/v1/merchants/email-verification', { body });

  it('refuses a URL registration would refuse, sending and counting no code', async () => {
    for (const url of ['http://localhost:4242/hooks', 'https://127.0.0.1/hooks', 'not a url']) {
      const res = await start({ email: 'first@shop.example', webhook_url: url });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 3, message: expect.stringMatching(/^webhook_url /) });
    }
    expect(t.mailer.sent).toHaveLength(0);
    // the one code an hour this email gets is still there
    const ok = await start({ email: 'first@shop.example', webhook_url: 'https://8.8.8.8/hooks' });
    expect(ok.status).toBe(200);
    await t.mailer.waitForCode('first@shop.example');
    expect((await start({ email: 'first@shop.example' })).status).toBe(429);
  });

  it('the SDK stops at step 1 with the reason, before asking for a code', async () => {
    let asked = false;
    const failure = await register({
      baseUrl: t.url,
      email: 'second@shop.example',
      name: 'Shop',
      webhookUrl: 'http://localhost:4242/hooks',
      getCode: async () => {
        asked = true;
        return '000000';
      },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BadRequestError);
    expect((failure as Error).message).toBe('webhook_url must use https');
    expect(asked).toBe(false);
    expect(t.mailer.sent.filter((m) => m.to === 'second@shop.example')).toHaveLength(0);
  });
});
