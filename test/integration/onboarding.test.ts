/**
 * Merchant onboarding and credentials through HTTP: the four-step flow with a real SMTP receiver,
 * every failure path, live registration with a bearer user, idempotency, rotation and revocation.
 */
import { hmacHex } from '../../lib/core/secrets.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { startSmtpReceiver, type SmtpReceiver } from '../helpers/smtp.ts';
import { registerMerchant } from '../helpers/merchant.ts';
import { solvePow, verifyPow } from '../../lib/onboarding/pow.ts';
import { liveSecrets, type MerchantState } from '../../lib/merchants/merchant.ts';

const AUTH = { code: 7, message: 'missing or invalid authorization header' };

describe('onboarding over HTTP with a real SMTP receiver', () => {
  let smtp: SmtpReceiver;
  let t: TestNode;
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    t = await startTestNode(
      { SMTP_URL: smtp.url, TRUSTED_EMAIL_DOMAINS: 'trusted.example', TRUSTED_EMAILS: 'boss@gmail.com', POW_DIFFICULTY: '8' },
      { now },
    );
  });
  afterAll(async () => {
    await t.stop();
    await smtp.stop();
  });
  afterEach(() => {
    offsetMs = 0;
  });

  async function start(email: string, extra: Record<string, unknown> = {}) {
    const res = await t.request('POST', '/v1/merchants/email-verification', { body: { email, ...extra } });
    expect(res.status).toBe(200);
    return res.body.registration_intent_id as string;
  }

  async function verified(email: string, extra: Record<string, unknown> = {}) {
    const intent = await start(email, extra);
    const code = await smtp.waitForCode(email);
    const res = await t.request('POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code } });
    expect(res.body).toEqual({ registration_intent_id: intent, verified: true });
    return intent;
  }

  async function challenge(intent: string) {
    const res = await t.request('POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } });
    expect(res.status).toBe(200);
    return res.body;
  }

  it('registers a sandbox merchant through the four steps and authenticates with its key', async () => {
    const email = 'Alice@Trusted.Example';
    const intent = await verified(email.toLowerCase());
    const pow = await challenge(intent);
    expect(pow).toMatchObject({ required: true, algorithm_version: 'sha256-leading-zero-bits-v1', difficulty: 8 });
    expect(typeof pow.challenge_id).toBe('string');
    expect(typeof pow.challenge).toBe('string');
    expect(Date.parse(pow.expires_at)).toBeGreaterThan(Date.now());
    const res = await t.request('POST', '/v1/merchants', {
      body: {
        name: 'Alice Shop',
        sandbox: true,
        registration_intent_id: intent,
        proof_of_work_challenge_id: pow.challenge_id,
        proof_of_work_nonce: solvePow(pow.challenge, pow.difficulty),
        webhook_url: 'https://hooks.example.com/pay',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Alice Shop',
      email: 'alice@trusted.example',
      sandbox: true,
      rate_limit_per_minute: 60,
      webhook_url: 'https://hooks.example.com/pay',
    });
    expect(res.body.id).toMatch(/^mer_/);
    expect(res.body.api_key).toMatch(/^service_sk_test_[A-Za-z0-9]{30,}$/);
    expect(res.body.webhook_secret).toMatch(/^whsec_/);
    expect(Date.parse(res.body.created_at)).not.toBeNaN();

    const me = await t.request('GET', '/v1/me', { key: res.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: res.body.id, name: 'Alice Shop', rate_limit_per_minute: 60 });
    expect(me.body.api_key).toBeUndefined();
    expect(me.body.webhook_secret).toBeUndefined();

    // the key is stored only as a hash
    const keys = await t.node.rt.store.find('api_keys', { merchant_id: res.body.id });
    expect(JSON.stringify(keys)).not.toContain(res.body.api_key);
    const merchantDoc = await t.node.rt.store.get('merchants', res.body.id);
    expect(JSON.stringify(merchantDoc)).not.toContain(res.body.webhook_secret);
    expect(await t.node.rt.store.find('audit_events', { type: 'merchant.registered', merchant_id: res.body.id })).toHaveLength(1);

    // the intent is single-use
    const again = await t.request('POST', '/v1/merchants', {
      body: {
        name: 'Again',
        sandbox: true,
        registration_intent_id: intent,
        proof_of_work_challenge_id: pow.challenge_id,
        proof_of_work_nonce: 'x',
      },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(5);
  });

  it('answers step 1 with the same shape whatever the email, and sends a code only to trusted ones', async () => {
    const before = smtp.mails.length;
    const trusted = await t.request('POST', '/v1/merchants/email-verification', { body: { email: 'bob@trusted.example' } });
    const untrusted = await t.request('POST', '/v1/merchants/email-verification', { body: { email: 'eve@gmail.com' } });
    expect(untrusted.status).toBe(200);
    expect(Object.keys(untrusted.body).sort()).toEqual(Object.keys(trusted.body).sort());
    await smtp.waitForCode('bob@trusted.example');
    await new Promise((r) => setTimeout(r, 200));
    expect(smtp.mails.slice(before).flatMap((m) => m.to)).toEqual(['bob@trusted.example']);
    // a trusted single address on a consumer domain
    await start('boss@gmail.com');
    expect(await smtp.waitForCode('boss@gmail.com')).toMatch(/^\d{6}$/);
  });

  it('refuses disposable and malformed emails with 400', async () => {
    for (const email of ['someone@mailinator.com', 'not-an-email']) {
      const res = await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(3);
      expect(res.body.message).toEqual(expect.any(String));
    }
  });

  it('keeps the email code under a server secret: the stored hash cannot be brute-forced from the public intent id', async () => {
    const intent = await start('erin@trusted.example');
    const code = await smtp.waitForCode('erin@trusted.example');
    const stored = await t.node.rt.store.get<{ id: string; code_hash: string }>('registration_intents', intent);
    expect(stored!.code_hash).toMatch(/^[0-9a-f]{64}$/);
    // the old scheme (HMAC keyed by the intent id) would let 10^6 offline guesses find the code
    expect(stored!.code_hash).not.toBe(hmacHex(intent, code));
    expect(stored!.code_hash).not.toContain(code);
  });

  it('refuses a wrong code, limits attempts and lets codes expire', async () => {
    const intent = await start('carol@trusted.example');
    const code = await smtp.waitForCode('carol@trusted.example');
    const wrong = code === '000000' ? '111111' : '000000';
    const res = await t.request('POST', '/v1/merchants/email-verification/confirm', {
      body: { registration_intent_id: intent, code: wrong },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(3);
    for (let i = 0; i < 4; i++)
      await t.request('POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code: wrong } });
    const locked = await t.request('POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code } });
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe(4);

    const intent2 = await start('dave@trusted.example');
    const code2 = await smtp.waitForCode('dave@trusted.example');
    offsetMs = 11 * 60_000;
    const late = await t.request('POST', '/v1/merchants/email-verification/confirm', {
      body: { registration_intent_id: intent2, code: code2 },
    });
    expect(late.status).toBe(400);
  });

  it('refuses an untrusted email at registration, checking the allowlist live', async () => {
    const email = 'frank@revoked.example';
    await t.call('operators.trustEmail', { value: email });
    const intent = await verified(email);
    const pow = await challenge(intent);
    await t.call('operators.untrustEmail', { value: email });
    const res = await t.request('POST', '/v1/merchants', {
      body: {
        name: 'Frank',
        sandbox: true,
        registration_intent_id: intent,
        proof_of_work_challenge_id: pow.challenge_id,
        proof_of_work_nonce: solvePow(pow.challenge, pow.difficulty),
      },
    });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 7, message: 'registration is not permitted for this email' });
  });

  it('refuses an expired, foreign or reused challenge and a wrong nonce', async () => {
    const a = await verified('gina@trusted.example');
    const b = await verified('hank@trusted.example');
    const powA = await challenge(a);
    const powB = await challenge(b);
    const body = (intent: string, pow: any, nonce = solvePow(pow.challenge, pow.difficulty)) => ({
      name: 'Shop',
      sandbox: true,
      registration_intent_id: intent,
      proof_of_work_challenge_id: pow.challenge_id,
      proof_of_work_nonce: nonce,
    });

    const foreign = await t.request('POST', '/v1/merchants', { body: body(a, powB) });
    expect(foreign.status).toBe(400);
    let bad = 'x';
    for (let i = 0; verifyPow(powA.challenge, bad, powA.difficulty); i++) bad = `bad${i}`;
    const wrongNonce = await t.request('POST', '/v1/merchants', { body: body(a, powA, bad) });
    expect(wrongNonce.status).toBe(400);
    expect(wrongNonce.body.message).toMatch(/nonce/);

    offsetMs = 16 * 60_000;
    const expired = await t.request('POST', '/v1/merchants', { body: body(a, powA) });
    expect(expired.status).toBe(400);
    offsetMs = 0;

    const ok = await t.request('POST', '/v1/merchants', { body: body(b, powB) });
    expect(ok.status).toBe(201);
    const c = await verified('ivan@trusted.example');
    const reused = await t.request('POST', '/v1/merchants', { body: body(c, powB) });
    expect(reused.status).toBe(400);
  });

  it('lets an invited email register without proof of work, once', async () => {
    const { invitation_token } = await t.call('operators.createInvitation', { email: 'jane@gmail.com' });
    const intent = await verified('jane@gmail.com', { invitation_token });
    const pow = await challenge(intent);
    expect(pow.required).toBe(false);
    expect(pow.challenge_id).toBeUndefined();
    expect(pow.challenge).toBeUndefined();
    const res = await t.request('POST', '/v1/merchants', { body: { name: 'Jane', sandbox: true, registration_intent_id: intent } });
    expect(res.status).toBe(201);
    // the invitation is used up: no code for a second intent
    const before = smtp.mails.length;
    await start('jane@gmail.com', { invitation_token });
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.mails.length).toBe(before);
  });

  it('refuses an invitation whose validity is not a positive number of days, creating nothing', async () => {
    const before = await t.node.rt.store.count('invitations', {});
    for (const days of ['abc', -1, 0, 1e9]) {
      await expect(t.call('operators.createInvitation', { days })).rejects.toMatchObject({
        code: 400,
        message: expect.stringMatching(/days/),
      });
    }
    expect(await t.node.rt.store.count('invitations', {})).toBe(before);
  });

  it('refuses unknown fields and a non-sandbox registration without a bearer token', async () => {
    const unknown = await t.request('POST', '/v1/merchants', { body: { name: 'X', sandbox: true, color: 'red' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe(3);
    expect(unknown.body.message).toMatch(/color/);
    const live = await t.request('POST', '/v1/merchants', { body: { name: 'X' } });
    expect(live.status).toBe(403);
    expect(live.body.code).toBe(7);
    const badBearer = await t.request('POST', '/v1/merchants', { body: { name: 'X' }, bearer: 'usr_notarealtokenatall0000' });
    expect(badBearer.status).toBe(401);
    expect(badBearer.body).toMatchObject(AUTH);
  });

  it('registers a live merchant for an operator-created bearer user', async () => {
    const { bearer_token } = await t.call('operators.createUser', { email: 'ops@corp.example' });
    const res = await t.request('POST', '/v1/merchants', {
      bearer: bearer_token,
      body: { name: 'Corp', webhook_url: 'https://corp.example.com/hooks' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ sandbox: false, email: 'ops@corp.example' });
    expect(res.body.api_key).toMatch(/^service_sk_live_/);
  });

  it('returns the same merchant and credentials for a retried idempotency_key, and 409 for another payload', async () => {
    const intent = await verified('kim@trusted.example');
    const pow = await challenge(intent);
    const body = {
      name: 'Kim',
      sandbox: true,
      idempotency_key: 'reg-kim-1',
      registration_intent_id: intent,
      proof_of_work_challenge_id: pow.challenge_id,
      proof_of_work_nonce: solvePow(pow.challenge, pow.difficulty),
    };
    const [first, second] = await Promise.all([t.request('POST', '/v1/merchants', { body }), t.request('POST', '/v1/merchants', { body })]);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    const third = await t.request('POST', '/v1/merchants', { body });
    expect(third.body.api_key).toBe(first.body.api_key);
    expect(await t.node.rt.store.count('merchants', { email: 'kim@trusted.example' })).toBe(1);
    const other = await t.request('POST', '/v1/merchants', { body: { ...body, name: 'Kim 2' } });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 5, message: 'idempotency key was already used with a different payload' });
  });

  it('answers 401 code 7 for a missing or invalid key, and serves /openapi.json only with a key', async () => {
    for (const key of [undefined, 'service_sk_test_doesnotexist0000000000000000', 'garbage']) {
      const res = await t.request('GET', '/v1/me', key ? { key } : {});
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject(AUTH);
    }
    const anon = await t.request('GET', '/openapi.json');
    expect(anon.status).toBe(401);
    expect(anon.body).toMatchObject(AUTH);
    const m = await registerMerchant(t, { codeFor: (e) => smtp.waitForCode(e) });
    const doc = await t.request('GET', '/openapi.json', { key: m.apiKey });
    expect(doc.status).toBe(200);
    expect(doc.headers.get('content-type')).toMatch(/application\/json/);
    expect(doc.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0' } });
    expect(doc.body.paths['/v1/merchants']).toBeDefined();
  });

  it('rotates the API key with an overlap, revokes the previous key early, and lets it expire', async () => {
    const m = await registerMerchant(t, { codeFor: (e) => smtp.waitForCode(e) });
    const rot = await t.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey });
    expect(rot.status).toBe(200);
    expect(rot.body.api_key).toMatch(/^service_sk_test_/);
    expect(rot.body.api_key).not.toBe(m.apiKey);
    const until = Date.parse(rot.body.previous_api_key_expires_at);
    expect(until).toBeGreaterThan(Date.now());
    expect((await t.request('GET', '/v1/me', { key: m.apiKey })).status).toBe(200);
    const me = await t.request('GET', '/v1/me', { key: rot.body.api_key });
    expect(me.status).toBe(200);
    expect(me.body.previous_api_key_expires_at).toBe(rot.body.previous_api_key_expires_at);

    // the rotated-out key still reads, but cannot rotate again or revoke the new key (account takeover)
    for (const [path, body] of [
      ['rotate', {}],
      ['revoke', { credential: 'api_key' }],
      ['rotate', { credential: 'webhook_secret' }],
    ] as const) {
      const takeover = await t.request('POST', `/v1/me/credentials/${path}`, { key: m.apiKey, body });
      expect(takeover.status).toBe(403);
      expect(takeover.body.message).toMatch(/only the active API key/);
    }
    expect((await t.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(200);

    const rev = await t.request('POST', '/v1/me/credentials/revoke', { key: rot.body.api_key, body: { credential: 'api_key' } });
    expect(rev.body).toEqual({ credential: 'api_key', revoked: true });
    const old = await t.request('GET', '/v1/me', { key: m.apiKey });
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject(AUTH);
    expect((await t.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(200);

    // a second rotation's previous key stops at the end of its window
    const rot2 = await t.request('POST', '/v1/me/credentials/rotate', { key: rot.body.api_key });
    offsetMs = Date.parse(rot2.body.previous_api_key_expires_at) - Date.now() + 1000;
    expect((await t.request('GET', '/v1/me', { key: rot.body.api_key })).status).toBe(401);
    expect((await t.request('GET', '/v1/me', { key: rot2.body.api_key })).status).toBe(200);
  });

  it('rotates the webhook secret, keeping the previous one live until revoked', async () => {
    const m = await registerMerchant(t, { codeFor: (e) => smtp.waitForCode(e) });
    const rot = await t.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey, body: { credential: 'webhook_secret' } });
    expect(rot.status).toBe(200);
    expect(rot.body.webhook_secret).toMatch(/^whsec_/);
    // the secrets that sign now, as the webhook sender reads them (sealed at rest)
    const signing = async () =>
      liveSecrets((await t.node.rt.store.get<MerchantState>('merchants', m.id))!, new Date()).map((x) => t.node.rt.keyring.open(x.sealed));
    expect(await signing()).toEqual([rot.body.webhook_secret, m.webhookSecret]);
    const rev = await t.request('POST', '/v1/me/credentials/revoke', { key: m.apiKey, body: { credential: 'webhook_secret' } });
    expect(rev.body.revoked).toBe(true);
    expect(await signing()).toEqual([rot.body.webhook_secret]);
    const bad = await t.request('POST', '/v1/me/credentials/rotate', { key: m.apiKey, body: { credential: 'password' } });
    expect(bad.status).toBe(400);
  });

  it('refuses a webhook_url on a private address and counts invalid_webhook_url', async () => {
    const strict = await startTestNode({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    try {
      const { bearer_token } = await strict.call('operators.createUser', { email: 'x@corp.example' });
      for (const url of [
        'http://hooks.example.com/x',
        'https://127.0.0.1/x',
        'https://169.254.169.254/latest',
        'https://[::ffff:127.0.0.1]/x',
        'https://localhost/x',
        'notaurl',
      ]) {
        const res = await strict.request('POST', '/v1/merchants', { bearer: bearer_token, body: { name: 'X', webhook_url: url } });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(3);
      }
      const metrics = await strict.request('GET', '/metrics');
      expect(metrics.text).toMatch(
        /abuse_signal_total\{signal="registration_spike",outcome="invalid_webhook_url",environment="live",chain="",network="",token=""\} 6/,
      );
    } finally {
      await strict.stop();
    }
  });
});
