/**
 * Merchant onboarding and credentials (facade): the four-step public registration (email code,
 * confirmation, proof of work, registration behind the trust gate), live registration by a bearer
 * user, the profile, and credential rotation through the merchant actor.
 */
import { MailOutbox, mailOp } from '../lib/onboarding/mail-outbox.ts';
import { countIntent, countWrongCode, guessesLeft } from '../lib/onboarding/limits.ts';
import { randomInt } from 'node:crypto';
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime.ts';
import { clientHash, merchantCaller, requestMeta } from '../lib/core/request-meta.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/validation.ts';
import { badRequest, forbidden, notFound, rateLimited } from '../lib/core/errors.ts';
import { newId, randomToken } from '../lib/core/ids.ts';
import { auditOp } from '../lib/core/audit.ts';
import { constantTimeEqual, hmacHex, sha256Hex } from '../lib/core/secrets.ts';
import { isDisposableEmail } from '../lib/onboarding/disposable.ts';
import { isTrusted, normalizeEmail } from '../lib/onboarding/trust.ts';
import { POW_ALGORITHM } from '../lib/onboarding/pow.ts';
import {
  CHALLENGE_TTL_MS, CODE_MAX_ATTEMPTS, CODE_TTL_MS, INTENT_TTL_MS, checkRegistrant, decideRegistration, invitationOpen, liveIntent,
  type IntentDoc, type InvitationDoc, type PowChallengeDoc,
} from '../lib/onboarding/intents.ts';
import { checkWebhookUrl } from '../lib/webhooks/net-guard.ts';
import { keyHash, newApiKey, newWebhookSecret } from '../lib/auth.ts';
import { Idempotency, idempotencyKey } from '../lib/core/idempotency.ts';
import type { WriteOp } from '../lib/store/port.ts';
import { type MerchantMsg, type MerchantReply, type MerchantState } from '../actors/merchant.ts';
import { nodeAlerts, requestContext } from '../lib/ops/alerts/index.ts';

const ROTATION_OVERLAP_MS = 24 * 3600_000;

type Body<T> = { body: T };

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

export function createMerchantsService(rt: Runtime): ServiceSchema {
  const { store } = rt;
  const idempotency = new Idempotency(store, rt.keyring);
  // keyed by a server secret: the intent id is public, so an HMAC under it alone is brute-forced offline
  const codeKey = rt.keyring.derive('email-code');
  const codeHash = (intentId: string, code: string) => hmacHex(codeKey, `${intentId}:${code}`);
  const alerts = nodeAlerts(rt);
  /** requests answered by an idempotent replay (not a second registration) */
  const replays = new WeakSet<Context>();

  /** registration_spike counts every outcome of POST /v1/merchants per source (and per bearer agent). */
  function reportRegistration(ctx: Context, ok: boolean, merchant: { id: string; name: string; sandbox: boolean } | null, logger: { warn(...a: unknown[]): void }) {
    const caller = requestMeta(ctx).user;
    const agent = caller?.kind === 'bearer' ? caller.user_id.slice(0, 24) : null;
    const info = requestContext(rt, ctx, {
      merchant_id: merchant?.id ?? null, merchant_name: merchant?.name ?? null, agent_id: agent,
      environment: merchant ? (merchant.sandbox ? 'sandbox' : 'live') : null,
    });
    return alerts.report({ kind: 'registration', ok, source: info.source_ip_hash ?? 'unknown', agent_id: agent }, info, logger);
  }

  async function limitClient(ctx: Context, step: string) {
    const ip = clientHash(ctx);
    const n = await store.increment(`public:${step}:${ip}`, 1, 60_000, rt.now());
    if (n > rt.config.publicRateLimitPerMinute) throw rateLimited('too many requests from this client, retry later');
  }

  async function validInvitation(token: string | undefined, email: string): Promise<InvitationDoc | null> {
    if (!token) return null;
    const inv = await store.get<InvitationDoc>('invitations', sha256Hex(token));
    if (!inv || inv.used_by || (inv.expires_at && inv.expires_at <= rt.now().toISOString())) return null;
    if (inv.email && inv.email !== email) return null;
    return inv;
  }

  async function intentOr400(id: unknown): Promise<IntentDoc> {
    return liveIntent(typeof id === 'string' ? await store.get<IntentDoc>('registration_intents', id) : null, rt.now());
  }

  function callActor(ctx: Context, id: string, msg: MerchantMsg): Promise<MerchantReply> {
    return ctx.call('merchant-actors.send', { id, msg });
  }

  async function currentMerchant(ctx: Context): Promise<MerchantState> {
    const caller = requestMeta(ctx).user;
    if (caller?.kind !== 'merchant') throw forbidden();
    const m = await store.get<MerchantState>('merchants', caller.merchant_id);
    if (!m) throw notFound('merchant');
    return m;
  }

  /**
   * The key that made the request: rotating or revoking needs the active one (the merchant actor checks),
   * since a key in its rotation overlap (perhaps the leaked one being replaced) could otherwise rotate
   * again and revoke the owner's new key, keeping the account.
   */
  const callerKeyId = (ctx: Context): string => merchantCaller(ctx)?.key_id ?? '';
  async function registerOnce(ctx: Context<Body<unknown>>): Promise<Partial<ReturnType<typeof presentMerchant>>> {
    const body = validate<{
      name: string; sandbox?: boolean; webhook_url?: string; idempotency_key?: string;
      registration_intent_id?: string; proof_of_work_challenge_id?: string; proof_of_work_nonce?: string;
    }>('RegisterMerchantRequest', ctx.params.body);
    const caller = requestMeta(ctx).user ?? null;
    const bearer = caller?.kind === 'bearer' ? caller : null;
    const sandbox = body.sandbox ?? false;
    checkRegistrant(bearer, sandbox);
    const environment = sandbox ? 'sandbox' : 'live';
    const now = rt.now();
    const key = idempotencyKey(body.idempotency_key, 'idempotency_key must be 1 to 255 visible ASCII characters');
    const idem = key
      ? { scope: 'merchants.register', key, payload: { ...body, bearer: bearer?.user_id ?? null }, now, seal: true }
      : null;
    if (idem) {
      const earlier = await idempotency.replay<Partial<ReturnType<typeof presentMerchant>>>(idem);
      if (earlier !== undefined) { created(ctx, '/v1/me'); replays.add(ctx); return earlier; }
    }
    if (body.webhook_url !== undefined) {
      const check = await checkWebhookUrl(body.webhook_url, { allowPrivate: rt.config.webhookAllowPrivate });
      if (!check.ok) {
        rt.metrics.signal({ signal: 'registration_spike', outcome: 'invalid_webhook_url', environment });
        throw badRequest(check.reason!);
      }
    }
    // read what the decision needs, decide (lib/onboarding/intents.ts), then write it all at once
    const intentNamed = body.registration_intent_id !== undefined;
    const intent = (!bearer || intentNamed) && typeof body.registration_intent_id === 'string'
      ? await store.get<IntentDoc>('registration_intents', body.registration_intent_id) : null;
    const invitation = intent?.invitation_id ? await store.get<InvitationDoc>('invitations', intent.invitation_id) : null;
    const needsPow = intent !== null && !invitationOpen(invitation);
    const challenge = needsPow && body.proof_of_work_challenge_id ? await store.get<PowChallengeDoc>('pow_challenges', body.proof_of_work_challenge_id) : null;
    const trusted = needsPow && !bearer ? await isTrusted(store, intent.email) : false;
    const decision = decideRegistration({ bearer, sandbox, intentNamed, intent, invitation, challenge, nonce: body.proof_of_work_nonce, trusted, now });
    const email = decision.email;
    const apiKey = newApiKey(sandbox);
    const webhookSecret = newWebhookSecret();
    const at = now.toISOString();
    const merchant: MerchantState = {
      id: newId('mer'), name: body.name, email, sandbox, webhook_url: body.webhook_url ?? null,
      rate_limit_per_minute: rt.config.rateLimitPerMinute, kyc_status: 'none', owner_user_id: bearer?.user_id ?? null,
      created_at: at, updated_at: at, active_key_id: keyHash(apiKey), active_key_prefix: apiKey.slice(0, 20),
      previous_key_id: null, previous_api_key_expires_at: null,
      webhook_secrets: [{ sealed: rt.keyring.seal(webhookSecret), created_at: at, expires_at: null }],
    };
    const response = presentMerchant(merchant, { api_key: apiKey, webhook_secret: webhookSecret });
    const ops: WriteOp[] = [
      ...decision.consume(merchant.id),
      { op: 'insert', coll: 'merchants', doc: merchant },
      { op: 'insert', coll: 'api_keys', doc: { id: merchant.active_key_id, merchant_id: merchant.id, kind: 'active', prefix: merchant.active_key_prefix, created_at: at, expires_at: null } },
      auditOp('merchant.registered', { merchant_id: merchant.id, environment }, at),
    ];
    const create = async () => {
      if (idem) ops.push(idempotency.record(idem, response));
      await store.write(ops);
      rt.metrics.signal({ signal: 'registration_spike', outcome: 'registered', environment });
      return response;
    };
    const result = idem ? await idempotency.run(idem, create) : await create();
    created(ctx, '/v1/me');
    return result;
  }

  let outbox: MailOutbox;

  return {
    name: 'merchants',
    created(this: { logger: { warn(...a: unknown[]): void } }) {
      outbox = new MailOutbox(store, rt.keyring, rt.mailer, this.logger, () => rt.now());
    },
    started() {
      outbox.start();
    },
    async stopped() {
      await outbox.stop();
    },
    actions: {
      /** Step 1: always the same 200 shape; a code is sent only to trusted or invited emails. */
      startEmailVerification: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate<{ email: string; invitation_token?: string }>('EmailVerificationRequest', ctx.params.body);
          await limitClient(ctx, 'email');
          const email = normalizeEmail(body.email);
          if (isDisposableEmail(email)) throw badRequest('email addresses from disposable-mail providers are not accepted');
          const now = rt.now();
          await countIntent(store, rt.config.registration, email, now);
          const invitation = await validInvitation(body.invitation_token, email);
          const eligible = invitation !== null || (await isTrusted(store, email));
          const intent: IntentDoc = {
            id: newId('ri'), email, created_at: now.toISOString(),
            expires_at: new Date(now.getTime() + INTENT_TTL_MS).toISOString(),
            verified: false, code_hash: null, code_expires_at: null, attempts: 0,
            invitation_id: invitation?.id ?? null, consumed_by: null,
          };
          // the same work for every email (a code, its hash, a sealed mail row in one write): neither the
          // answer nor its timing tells whether the address is trusted; only an eligible row is ever sent
          const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
          const hash = codeHash(intent.id, code);
          if (eligible) {
            intent.code_hash = hash;
            intent.code_expires_at = new Date(now.getTime() + CODE_TTL_MS).toISOString();
          }
          const mail = mailOp(rt.keyring, {
            to: email,
            subject: 'Your verification code',
            text: `Your verification code is ${code}. It expires in ${CODE_TTL_MS / 60_000} minutes.\nIf you did not ask for it, ignore this email.`,
          }, now, eligible);
          await store.write([{ op: 'insert', coll: 'registration_intents', doc: intent }, mail]);
          if (eligible) {
            const id = (mail as { doc: { id: string } }).doc.id;
            setImmediate(() => outbox.deliverNow(id).catch((e) => this.logger.warn('verification mail delivery:', (e as Error).message)));
          }
          return { registration_intent_id: intent.id, expires_at: intent.expires_at };
        },
      },

      /** Step 2: the code, compared in constant time, with a limited number of attempts. */
      confirmEmail: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate<{ registration_intent_id: string; code: string }>('EmailConfirmRequest', ctx.params.body);
          await limitClient(ctx, 'confirm');
          const intent = await intentOr400(body.registration_intent_id);
          if (intent.verified) return { registration_intent_id: intent.id, verified: true };
          if (intent.attempts >= CODE_MAX_ATTEMPTS) throw rateLimited('too many wrong codes; start again with email verification');
          // wrong guesses count per email across intents: a new intent does not buy new guesses
          if (!(await guessesLeft(store, rt.config.registration, intent.email, rt.now()))) throw rateLimited('too many wrong codes for this email today; retry tomorrow');
          const now = rt.now().toISOString();
          const ok = intent.code_hash !== null && intent.code_expires_at !== null && intent.code_expires_at > now
            && constantTimeEqual(intent.code_hash, codeHash(intent.id, body.code));
          const next: IntentDoc = ok ? { ...intent, verified: true, code_hash: null } : { ...intent, attempts: intent.attempts + 1 };
          await store.write([{ op: 'cas', coll: 'registration_intents', doc: next, expected: intent.version! }]);
          if (!ok) {
            await countWrongCode(store, intent.email, rt.now());
            throw badRequest('the code is wrong or has expired');
          }
          return { registration_intent_id: intent.id, verified: true };
        },
      },

      /** Step 3: a single-use challenge bound to the intent, or required:false with an invitation. */
      issueProofOfWork: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate<{ registration_intent_id: string }>('ProofOfWorkRequest', ctx.params.body);
          await limitClient(ctx, 'pow');
          const intent = await intentOr400(body.registration_intent_id);
          if (!intent.verified) throw badRequest('confirm the email before asking for a proof-of-work challenge');
          const now = rt.now();
          if (intent.invitation_id && (await store.get<InvitationDoc>('invitations', intent.invitation_id))?.used_by === null) {
            return { required: false, algorithm_version: POW_ALGORITHM, difficulty: 0, expires_at: intent.expires_at };
          }
          const challenge: PowChallengeDoc = {
            id: newId('pow'), intent_id: intent.id, challenge: randomToken(24), difficulty: rt.config.powDifficulty,
            expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS).toISOString(), used: false,
          };
          await store.write([{ op: 'insert', coll: 'pow_challenges', doc: challenge }]);
          return {
            required: true, challenge_id: challenge.id, algorithm_version: POW_ALGORITHM,
            challenge: challenge.challenge, difficulty: challenge.difficulty, expires_at: challenge.expires_at,
          };
        },
      },

      /** Step 4: creates the merchant; api_key and webhook_secret are returned once. */
      register: {
        async handler(ctx: Context<Body<unknown>>) {
          let result: Partial<ReturnType<typeof presentMerchant>>;
          try {
            result = await registerOnce(ctx);
          } catch (e) {
            const status = (e as { code?: unknown }).code;
            if (typeof status === 'number' && status >= 400 && status < 500) await reportRegistration(ctx, false, null, this.logger);
            throw e;
          }
          // an idempotent replay is the same registration: counted once
          if (typeof result.id === 'string' && !replays.has(ctx)) {
            await reportRegistration(ctx, true, { id: result.id, name: result.name ?? '', sandbox: result.sandbox ?? true }, this.logger);
          }
          return result;
        },
      },

      me: {
        async handler(ctx: Context) {
          const m = await currentMerchant(ctx);
          const overlap = m.previous_api_key_expires_at && m.previous_api_key_expires_at > rt.now().toISOString();
          return {
            ...presentMerchant(m),
            api_key_prefix: m.active_key_prefix,
            ...(overlap ? { previous_api_key_expires_at: m.previous_api_key_expires_at } : {}),
          };
        },
      },

      /** Rotates the API key (default) or the webhook secret; the previous one keeps working for the overlap. */
      rotate: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate<{ credential?: 'api_key' | 'webhook_secret' }>('RotateCredentialsRequest', ctx.params.body ?? {});
          const m = await currentMerchant(ctx);
          const overlapUntil = new Date(rt.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
          if ((body.credential ?? 'api_key') === 'api_key') {
            const apiKey = newApiKey(m.sandbox);
            await callActor(ctx, m.id, { type: 'rotate_api_key', new_key_id: keyHash(apiKey), new_key_prefix: apiKey.slice(0, 20), overlap_until: overlapUntil, by_key_id: callerKeyId(ctx) });
            return { credential: 'api_key', api_key: apiKey, previous_api_key_expires_at: overlapUntil };
          }
          const secret = newWebhookSecret();
          await callActor(ctx, m.id, { type: 'rotate_webhook_secret', sealed: rt.keyring.seal(secret), overlap_until: overlapUntil, by_key_id: callerKeyId(ctx) });
          return { credential: 'webhook_secret', webhook_secret: secret, previous_webhook_secret_expires_at: overlapUntil };
        },
      },

      /** Ends the overlap of the previous credential at once. */
      revoke: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate<{ credential?: 'api_key' | 'webhook_secret' }>('RevokeCredentialsRequest', ctx.params.body ?? {});
          const m = await currentMerchant(ctx);
          const credential = body.credential ?? 'api_key';
          const reply = await callActor(ctx, m.id, { type: 'revoke_previous', credential, by_key_id: callerKeyId(ctx) });
          return { credential, revoked: reply.revoked ?? false };
        },
      },

    },
  } as ServiceSchema;
}
