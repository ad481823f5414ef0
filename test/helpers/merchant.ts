/** Registers a merchant through the public four-step flow, as a client would. */
import { solvePow } from '../../lib/onboarding/pow.ts';
import type { TestNode } from './node.ts';

export interface RegisteredMerchant {
  id: string;
  apiKey: string;
  webhookSecret: string;
  email: string;
  body: Record<string, any>;
}

let seq = 0;

export async function registerMerchant(
  t: TestNode,
  opts: {
    name?: string;
    email?: string;
    webhook_url?: string;
    sandbox?: boolean;
    bearer?: string;
    codeFor?: (email: string) => Promise<string>;
  } = {},
): Promise<RegisteredMerchant> {
  const email = opts.email ?? `merchant${Date.now()}${seq++}@trusted.test`;
  if (opts.bearer) {
    const res = await t.request('POST', '/v1/merchants', {
      bearer: opts.bearer,
      body: {
        name: opts.name ?? 'Live Shop',
        sandbox: opts.sandbox ?? false,
        ...(opts.webhook_url ? { webhook_url: opts.webhook_url } : {}),
      },
    });
    if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
    return { id: res.body.id, apiKey: res.body.api_key, webhookSecret: res.body.webhook_secret, email: res.body.email, body: res.body };
  }
  await t.call('operators.trustDomain', { value: email.split('@')[1] });
  const start = await t.request('POST', '/v1/merchants/email-verification', { body: { email } });
  if (start.status !== 200) throw new Error(`email verification failed: ${start.status} ${start.text}`);
  const intent = start.body.registration_intent_id;
  const code = opts.codeFor ? await opts.codeFor(email) : await t.mailer.waitForCode(email);
  if (!code) throw new Error('no verification code was sent');
  const confirm = await t.request('POST', '/v1/merchants/email-verification/confirm', { body: { registration_intent_id: intent, code } });
  if (confirm.status !== 200) throw new Error(`confirm failed: ${confirm.status} ${confirm.text}`);
  const pow = await t.request('POST', '/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: intent } });
  if (pow.status !== 200) throw new Error(`pow failed: ${pow.status} ${pow.text}`);
  const body: Record<string, unknown> = { name: opts.name ?? 'Test Shop', sandbox: true, registration_intent_id: intent };
  if (pow.body.required) {
    body.proof_of_work_challenge_id = pow.body.challenge_id;
    body.proof_of_work_nonce = solvePow(pow.body.challenge, pow.body.difficulty);
  }
  if (opts.webhook_url) body.webhook_url = opts.webhook_url;
  const res = await t.request('POST', '/v1/merchants', { body });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return { id: res.body.id, apiKey: res.body.api_key, webhookSecret: res.body.webhook_secret, email, body: res.body };
}
