/**
 * Merchant onboarding without a broker: the four public steps (email code, confirmation, proof of work,
 * registration behind the trust gate) and live registration by a bearer user. Each step validates its
 * input (the facade checks the schema), decides with the pure rules (./intents.ts, ./pow.ts, ./trust.ts)
 * and writes once. services/merchants.service.ts adds the per-client limits, the mail outbox and alerts.
 */
import { randomInt } from 'node:crypto';
import type { Config } from '../../config/index.ts';
import { badRequest, rateLimited } from '../core/errors.ts';
import { newId, randomToken } from '../core/ids.ts';
import { auditOp } from '../core/audit.ts';
import { constantTimeEqual, hmacHex, sha256Hex } from '../core/secrets.ts';
import { Idempotency, idempotencyKey } from '../core/idempotency.ts';
import type { Keyring } from '../core/keyring.ts';
import type { Store, WriteOp } from '../store/port.ts';
import type { Metrics } from '../runtime/metrics.ts';
import { keyHash, newApiKey, newWebhookSecret } from '../http/auth.ts';
import { WEBHOOK_URL_REMEDIATION, checkWebhookUrl } from '../webhooks/net-guard.ts';
import type { MerchantState } from '../merchants/merchant.ts';
import { isDisposableEmail } from './disposable.ts';
import { isTrusted, normalizeEmail } from './trust.ts';
import { POW_ALGORITHM } from './pow.ts';
import { countIntent, countWrongCode, guessesLeft } from './limits.ts';
import { mailOp } from './mail-outbox.ts';
import {
  CHALLENGE_TTL_MS,
  CODE_MAX_ATTEMPTS,
  CODE_TTL_MS,
  INTENT_TTL_MS,
  checkRegistrant,
  decideRegistration,
  invitationOpen,
  liveIntent,
  type IntentDoc,
  type InvitationDoc,
  type PowChallengeDoc,
} from './intents.ts';
import type { Checked } from '../http/contract.ts';

/** The Merchant as the API shows it; secrets only where given. */
export function presentMerchant(m: MerchantState, secrets: { api_key?: string; webhook_secret?: string } = {}) {
  return {
    id: m.id,
    name: m.name,
    email: m.email ?? undefined,
    sandbox: m.sandbox,
    ...(secrets.api_key ? { api_key: secrets.api_key } : {}),
    webhook_url: m.webhook_url ?? undefined,
    ...(secrets.webhook_secret ? { webhook_secret: secrets.webhook_secret } : {}),
    rate_limit_per_minute: m.rate_limit_per_minute,
    kyc_status: m.kyc_status,
    created_at: m.created_at,
  };
}

export type PresentedMerchant = Partial<ReturnType<typeof presentMerchant>>;

export type RegisterBody = Checked<'RegisterMerchantRequest'>;

export interface OnboardingOptions {
  store: Store;
  keyring: Keyring;
  config: Pick<Config, 'registration' | 'powDifficulty' | 'rateLimitPerMinute' | 'webhookAllowPrivate'>;
  metrics: Pick<Metrics, 'signal'>;
  now: () => Date;
}

export class Onboarding {
  private readonly o: OnboardingOptions;
  private readonly idempotency: Idempotency;
  // keyed by a server secret: the intent id is public, so an HMAC under it alone is brute-forced offline
  private readonly codeKey: Buffer;

  constructor(o: OnboardingOptions) {
    this.o = o;
    this.idempotency = new Idempotency(o.store, o.keyring);
    this.codeKey = o.keyring.derive('email-code');
  }

  /** The rule of a merchant's webhook_url (https on a public host, unless configuration allows private ones). */
  private async checkWebhookUrl(url: string, environment: 'sandbox' | 'live'): Promise<void> {
    const check = await checkWebhookUrl(url, { allowPrivate: this.o.config.webhookAllowPrivate });
    if (check.ok) return;
    this.o.metrics.signal({ signal: 'registration_spike', outcome: 'invalid_webhook_url', environment });
    throw badRequest(check.reason!, { field: 'webhook_url', remediation: WEBHOOK_URL_REMEDIATION });
  }

  private codeHash(intentId: string, code: string): string {
    return hmacHex(this.codeKey, `${intentId}:${code}`);
  }

  private async validInvitation(token: string | undefined, email: string): Promise<InvitationDoc | null> {
    if (!token) return null;
    const inv = await this.o.store.get<InvitationDoc>('invitations', sha256Hex(token));
    if (!inv || inv.used_by || (inv.expires_at && inv.expires_at <= this.o.now().toISOString())) return null;
    if (inv.email && inv.email !== email) return null;
    return inv;
  }

  private async intentOr400(id: unknown): Promise<IntentDoc> {
    return liveIntent(typeof id === 'string' ? await this.o.store.get<IntentDoc>('registration_intents', id) : null, this.o.now());
  }

  /** Step 1: always the same answer; a code is mailed only to trusted or invited emails (`mailId`). */
  async startEmailVerification(body: {
    email: string;
    invitation_token?: string;
    webhook_url?: string;
  }): Promise<{ answer: { registration_intent_id: string; expires_at: string }; mailId: string | null }> {
    const email = normalizeEmail(body.email);
    if (await isDisposableEmail(email))
      throw badRequest('email addresses from disposable-mail providers are not accepted', {
        field: 'email',
        remediation: 'Use an email address of your own domain or mail provider.',
      });
    // before any code is sent or counted: a URL step 4 would refuse must not cost one of the email's codes
    if (body.webhook_url !== undefined) await this.checkWebhookUrl(body.webhook_url, 'sandbox');
    const now = this.o.now();
    await countIntent(this.o.store, this.o.config.registration, email, now);
    const invitation = await this.validInvitation(body.invitation_token, email);
    const eligible = invitation !== null || (await isTrusted(this.o.store, email));
    const intent: IntentDoc = {
      id: newId('ri'),
      email,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + INTENT_TTL_MS).toISOString(),
      verified: false,
      code_hash: null,
      code_expires_at: null,
      attempts: 0,
      invitation_id: invitation?.id ?? null,
      consumed_by: null,
    };
    // the same work for every email (a code, its hash, a sealed mail row in one write): neither the
    // answer nor its timing tells whether the address is trusted; only an eligible row is ever sent
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const hash = this.codeHash(intent.id, code);
    if (eligible) {
      intent.code_hash = hash;
      intent.code_expires_at = new Date(now.getTime() + CODE_TTL_MS).toISOString();
    }
    const mail = mailOp(
      this.o.keyring,
      {
        to: email,
        subject: 'Your verification code',
        text: `Your verification code is ${code}. It expires in ${CODE_TTL_MS / 60_000} minutes.\nIf you did not ask for it, ignore this email.`,
      },
      now,
      eligible,
    );
    await this.o.store.write([{ op: 'insert', coll: 'registration_intents', doc: intent }, mail]);
    // only an eligible row is ever sent: the facade hands it to the mail outbox at once
    return {
      answer: { registration_intent_id: intent.id, expires_at: intent.expires_at },
      mailId: eligible ? (mail as { doc: { id: string } }).doc.id : null,
    };
  }

  /** Step 2: the code, compared in constant time, with a limited number of attempts. */
  async confirmEmail(body: { registration_intent_id: string; code: string }): Promise<{ registration_intent_id: string; verified: true }> {
    const intent = await this.intentOr400(body.registration_intent_id);
    if (intent.verified) return { registration_intent_id: intent.id, verified: true };
    if (intent.attempts >= CODE_MAX_ATTEMPTS)
      throw rateLimited('too many wrong codes; start again with email verification', {
        retryable: false,
        remediation: 'Start again with POST /v1/merchants/email-verification: this registration intent takes no more codes.',
      });
    // wrong guesses count per email across intents: a new intent does not buy new guesses
    if (!(await guessesLeft(this.o.store, this.o.config.registration, intent.email, this.o.now())))
      throw rateLimited('too many wrong codes for this email today; retry tomorrow', {
        retryable: false,
        remediation: 'Wait for the next UTC day before confirming this email again (REGISTRATION_WRONG_CODES_PER_DAY).',
      });
    const now = this.o.now().toISOString();
    const ok =
      intent.code_hash !== null &&
      intent.code_expires_at !== null &&
      intent.code_expires_at > now &&
      constantTimeEqual(intent.code_hash, this.codeHash(intent.id, body.code));
    const next: IntentDoc = ok ? { ...intent, verified: true, code_hash: null } : { ...intent, attempts: intent.attempts + 1 };
    await this.o.store.write([{ op: 'cas', coll: 'registration_intents', doc: next, expected: intent.version! }]);
    if (!ok) {
      await countWrongCode(this.o.store, intent.email, this.o.now());
      throw badRequest('the code is wrong or has expired', {
        field: 'code',
        remediation: 'Send the six-digit code of the latest verification email; if it is older than its expiry, ask for a new one.',
      });
    }
    return { registration_intent_id: intent.id, verified: true };
  }

  /** Step 3: a single-use challenge bound to the intent, or required:false with an invitation. */
  async issueProofOfWork(body: { registration_intent_id: string }) {
    const intent = await this.intentOr400(body.registration_intent_id);
    if (!intent.verified)
      throw badRequest('confirm the email before asking for a proof-of-work challenge', {
        field: 'registration_intent_id',
        remediation: 'Confirm the email first with POST /v1/merchants/email-verification/confirm and the mailed code.',
      });
    const now = this.o.now();
    if (intent.invitation_id && (await this.o.store.get<InvitationDoc>('invitations', intent.invitation_id))?.used_by === null) {
      return { required: false, algorithm_version: POW_ALGORITHM, difficulty: 0, expires_at: intent.expires_at };
    }
    const challenge: PowChallengeDoc = {
      id: newId('pow'),
      intent_id: intent.id,
      challenge: randomToken(24),
      difficulty: this.o.config.powDifficulty,
      expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(),
      used: false,
    };
    await this.o.store.write([{ op: 'insert', coll: 'pow_challenges', doc: challenge }]);
    return {
      required: true,
      challenge_id: challenge.id,
      algorithm_version: POW_ALGORITHM,
      challenge: challenge.challenge,
      difficulty: challenge.difficulty,
      expires_at: challenge.expires_at,
    };
  }

  /**
   * Step 4: validate → decide → write. `bearer` is a bearer user registering a live merchant. The
   * response holds the api_key and webhook_secret once (an idempotent replay gives the same, `replay: true`).
   */
  async register(
    bearer: { user_id: string; email: string } | null,
    body: RegisterBody,
  ): Promise<{ response: PresentedMerchant; replay: boolean }> {
    const sandbox = body.sandbox ?? false;
    checkRegistrant(bearer, sandbox);
    const environment = sandbox ? 'sandbox' : 'live';
    const now = this.o.now();
    const key = idempotencyKey(body.idempotency_key, 'idempotency_key');
    const idem = key ? { scope: 'merchants.register', key, payload: { ...body, bearer: bearer?.user_id ?? null }, now, seal: true } : null;
    if (idem) {
      const earlier = await this.idempotency.replay<PresentedMerchant>(idem);
      if (earlier !== undefined) return { response: earlier, replay: true };
    }
    if (body.webhook_url !== undefined) await this.checkWebhookUrl(body.webhook_url, environment);
    // read what the decision needs, decide (lib/onboarding/intents.ts), then write it all at once
    const intentNamed = body.registration_intent_id !== undefined;
    const intent =
      (!bearer || intentNamed) && typeof body.registration_intent_id === 'string'
        ? await this.o.store.get<IntentDoc>('registration_intents', body.registration_intent_id)
        : null;
    const invitation = intent?.invitation_id ? await this.o.store.get<InvitationDoc>('invitations', intent.invitation_id) : null;
    const needsPow = intent !== null && !invitationOpen(invitation);
    const challenge =
      needsPow && body.proof_of_work_challenge_id
        ? await this.o.store.get<PowChallengeDoc>('pow_challenges', body.proof_of_work_challenge_id)
        : null;
    const trusted = needsPow && !bearer ? await isTrusted(this.o.store, intent.email) : false;
    const decision = decideRegistration({
      bearer,
      sandbox,
      intentNamed,
      intent,
      invitation,
      challenge,
      nonce: body.proof_of_work_nonce,
      trusted,
      now,
    });
    const email = decision.email;
    const apiKey = newApiKey(sandbox);
    const webhookSecret = newWebhookSecret();
    const at = now.toISOString();
    const merchant: MerchantState = {
      id: newId('mer'),
      name: body.name,
      email,
      sandbox,
      webhook_url: body.webhook_url ?? null,
      rate_limit_per_minute: this.o.config.rateLimitPerMinute,
      kyc_status: 'none',
      owner_user_id: bearer?.user_id ?? null,
      created_at: at,
      updated_at: at,
      active_key_id: keyHash(apiKey),
      active_key_prefix: apiKey.slice(0, 20),
      previous_key_id: null,
      previous_api_key_expires_at: null,
      webhook_secrets: [{ sealed: this.o.keyring.seal(webhookSecret), created_at: at, expires_at: null }],
    };
    const response = presentMerchant(merchant, { api_key: apiKey, webhook_secret: webhookSecret });
    const ops: WriteOp[] = [
      ...decision.consume(merchant.id),
      { op: 'insert', coll: 'merchants', doc: merchant },
      {
        op: 'insert',
        coll: 'api_keys',
        doc: {
          id: merchant.active_key_id,
          merchant_id: merchant.id,
          kind: 'active',
          prefix: merchant.active_key_prefix,
          created_at: at,
          expires_at: null,
        },
      },
      auditOp('merchant.registered', { merchant_id: merchant.id, environment }, at),
    ];
    const create = async () => {
      if (idem) ops.push(this.idempotency.record(idem, response));
      await this.o.store.write(ops);
      this.o.metrics.signal({ signal: 'registration_spike', outcome: 'registered', environment });
      return response;
    };
    return { response: idem ? await this.idempotency.run(idem, create) : await create(), replay: false };
  }
}
