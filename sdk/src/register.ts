/**
 * Sandbox registration in one call: the four public steps (email verification, confirmation with the
 * emailed code, proof-of-work challenge, registration). The code arrives by email, so the caller
 * supplies `getCode` (a prompt in the CLI, a mailbox reader in tests). The body's `idempotency_key` makes
 * the last step safe to retry: a retry answers with the same merchant and credentials.
 */
import { PaymentsClient, type ClientOptions, type Schemas } from './client.ts';
import { solvePow, type PowProgress, type PowSolver } from './pow.ts';

export type RegisteredMerchant = Schemas['Merchant'];

export type RegistrationStep = 'email_verification' | 'confirm' | 'proof_of_work' | 'register';

export interface RegisterOptions extends Omit<ClientOptions, 'apiKey'> {
  email: string;
  name: string;
  webhookUrl?: string;
  invitationToken?: string;
  /** the six-digit code emailed to `email` */
  getCode: (info: { email: string; registrationIntentId: string }) => Promise<string>;
  /** how the proof of work is solved (default: a worker thread in Node, slices on this thread elsewhere) */
  solver?: PowSolver;
  onStep?: (step: RegistrationStep) => void;
  onProgress?: (p: PowProgress) => void;
  signal?: AbortSignal;
}

export async function register(opts: RegisterOptions): Promise<RegisteredMerchant> {
  const client = new PaymentsClient(opts);
  const api = client.api;
  opts.onStep?.('email_verification');
  const start = await client.unwrap(
    api.POST('/v1/merchants/email-verification', {
      body: {
        email: opts.email,
        ...(opts.invitationToken ? { invitation_token: opts.invitationToken } : {}),
        // checked before the code is sent: a URL the service refuses costs no code, no proof of work
        ...(opts.webhookUrl ? { webhook_url: opts.webhookUrl } : {}),
      },
    }),
  );
  const registrationIntentId = start.registration_intent_id;
  const code = await opts.getCode({ email: opts.email, registrationIntentId });
  opts.onStep?.('confirm');
  await client.unwrap(
    api.POST('/v1/merchants/email-verification/confirm', { body: { registration_intent_id: registrationIntentId, code: code.trim() } }),
  );
  opts.onStep?.('proof_of_work');
  const pow = await client.unwrap(
    api.POST('/v1/merchants/registration-proof-of-work', { body: { registration_intent_id: registrationIntentId } }),
  );
  const body: Schemas['RegisterMerchantRequest'] = {
    name: opts.name,
    sandbox: true,
    registration_intent_id: registrationIntentId,
    idempotency_key: `register-${registrationIntentId}`,
    ...(opts.webhookUrl ? { webhook_url: opts.webhookUrl } : {}),
  };
  if (pow.required) {
    const solver = opts.solver ?? solvePow;
    body.proof_of_work_challenge_id = pow.challenge_id;
    body.proof_of_work_nonce = await solver(pow.challenge!, pow.difficulty!, { onProgress: opts.onProgress, signal: opts.signal });
  }
  opts.onStep?.('register');
  return client.unwrap(api.POST('/v1/merchants', { body }));
}
