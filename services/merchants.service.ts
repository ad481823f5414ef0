/**
 * Merchant onboarding and credentials (facade): the four-step public registration (email code,
 * confirmation, proof of work, registration behind the trust gate), live registration by a bearer
 * user, the profile, and credential rotation through the merchant actor.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
import { ROTATION_OVERLAP_MS } from '../config/index.ts';
import { clientHash, merchantCaller, requestMeta } from '../lib/core/request-meta.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { notFound } from '../lib/core/errors.ts';
import { MailOutbox } from '../lib/onboarding/mail-outbox.ts';
import { Onboarding, presentMerchant, type PresentedMerchant } from '../lib/onboarding/onboarding.ts';
import { limitInStore } from '../lib/core/rate-limit.ts';
import { keyHash, newApiKey, newWebhookSecret } from '../lib/http/auth.ts';
import { type MerchantMsg, type MerchantReply, type MerchantState } from '../lib/merchants/merchant.ts';
import { nodeAlerts, requestContext } from '../lib/ops/alerts/index.ts';
import { parseRailPolicy, presentRailPolicy } from '../lib/merchants/rail-policy.ts';
import { knownRails } from '../lib/catalog/rules.ts';
import { sendToActor } from '../mixins/actor-host.mixin.ts';

type Body<T> = { body: T };

/** registration_spike counts every outcome of POST /v1/merchants per source (and per bearer agent). */
function reportRegistration(
  rt: Runtime,
  alerts: ReturnType<typeof nodeAlerts>,
  ctx: Context,
  ok: boolean,
  merchant: { id: string; name: string; sandbox: boolean } | null,
  logger: { warn(...a: unknown[]): void },
) {
  const caller = requestMeta(ctx).user;
  const agent = caller?.kind === 'bearer' ? caller.user_id.slice(0, 24) : null;
  const info = requestContext(rt, ctx, {
    merchant_id: merchant?.id ?? null,
    merchant_name: merchant?.name ?? null,
    agent_id: agent,
    environment: merchant ? (merchant.sandbox ? 'sandbox' : 'live') : null,
  });
  return alerts.report({ kind: 'registration', ok, source: info.source_ip_hash ?? 'unknown', agent_id: agent }, info, logger);
}

/**
 * Rotates the API key or the webhook secret through the merchant actor; the previous one keeps working for
 * the overlap (ROTATION_OVERLAP_MS). The new secret is answered once, never stored in the clear.
 */
async function rotateCredential(
  rt: Runtime,
  m: MerchantState,
  credential: 'api_key' | 'webhook_secret',
  byKeyId: string,
  send: (msg: MerchantMsg) => Promise<MerchantReply>,
) {
  const overlapUntil = new Date(rt.now().getTime() + ROTATION_OVERLAP_MS).toISOString();
  if (credential === 'api_key') {
    const apiKey = newApiKey(m.sandbox);
    await send({
      type: 'rotate_api_key',
      new_key_id: keyHash(apiKey),
      new_key_prefix: apiKey.slice(0, 20),
      overlap_until: overlapUntil,
      by_key_id: byKeyId,
    });
    return { credential: 'api_key', api_key: apiKey, previous_api_key_expires_at: overlapUntil };
  }
  const secret = newWebhookSecret();
  await send({
    type: 'rotate_webhook_secret',
    sealed: rt.keyring.seal(secret),
    overlap_until: overlapUntil,
    by_key_id: byKeyId,
  });
  return { credential: 'webhook_secret', webhook_secret: secret, previous_webhook_secret_expires_at: overlapUntil };
}

/**
 * Step 4 of registration: creates the merchant (api_key and webhook_secret are returned once), counting
 * every outcome for registration_spike; an idempotent replay is the same registration, counted once.
 */
async function register(
  rt: Runtime,
  alerts: ReturnType<typeof nodeAlerts>,
  onboarding: Onboarding,
  ctx: Context<Body<unknown>>,
  logger: { warn(...a: unknown[]): void },
): Promise<PresentedMerchant> {
  let answer: { response: PresentedMerchant; replay: boolean };
  try {
    const body = validate('RegisterMerchantRequest', ctx.params.body);
    const caller = requestMeta(ctx).user ?? null;
    answer = await onboarding.register(caller?.kind === 'bearer' ? caller : null, body);
  } catch (e) {
    const status = (e as { code?: unknown }).code;
    if (typeof status === 'number' && status >= 400 && status < 500) await reportRegistration(rt, alerts, ctx, false, null, logger);
    throw e;
  }
  created(ctx, '/v1/me');
  const result = answer.response;
  if (typeof result.id === 'string' && !answer.replay) {
    await reportRegistration(rt, alerts, ctx, true, { id: result.id, name: result.name ?? '', sandbox: result.sandbox ?? true }, logger);
  }
  return result;
}

export function createMerchantsService(rt: Runtime): ServiceSchema {
  const { store } = rt;
  const onboarding = new Onboarding({ store, keyring: rt.keyring, config: rt.config, metrics: rt.metrics, now: () => rt.now() });
  const alerts = nodeAlerts(rt);

  async function limitClient(ctx: Context, step: string) {
    const ip = clientHash(ctx);
    await limitInStore(store, 'public', `${step}:${ip}`, rt.config.publicRateLimitPerMinute, rt.now());
  }

  function callActor(ctx: Context, id: string, msg: MerchantMsg): Promise<MerchantReply> {
    return sendToActor(ctx, 'merchant-actors', id, msg);
  }

  async function currentMerchant(ctx: Context): Promise<MerchantState> {
    const caller = callingMerchant(ctx);
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
          const body = validate('EmailVerificationRequest', ctx.params.body);
          await limitClient(ctx, 'email');
          const { answer, mailId } = await onboarding.startEmailVerification(body);
          if (mailId)
            setImmediate(() =>
              outbox.deliverNow(mailId).catch((e) => this.logger.warn('verification mail delivery:', (e as Error).message)),
            );
          return answer;
        },
      },

      /** Step 2: the code, compared in constant time, with a limited number of attempts. */
      confirmEmail: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate('EmailConfirmRequest', ctx.params.body);
          await limitClient(ctx, 'confirm');
          return onboarding.confirmEmail(body);
        },
      },

      /** Step 3: a single-use challenge bound to the intent, or required:false with an invitation. */
      issueProofOfWork: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate('ProofOfWorkRequest', ctx.params.body);
          await limitClient(ctx, 'pow');
          return onboarding.issueProofOfWork(body);
        },
      },

      /** Step 4: creates the merchant; api_key and webhook_secret are returned once. */
      register: {
        handler(ctx: Context<Body<unknown>>) {
          return register(rt, alerts, onboarding, ctx, this.logger);
        },
      },

      me: {
        async handler(ctx: Context<{ merchant_id?: unknown }>) {
          // an operator in the REPL names the merchant (`call merchants.me --merchant_id mer_…`); a request
          // through the gateway always carries its authenticated caller, which is the only one it can read
          const asked = requestMeta(ctx).user === undefined ? ctx.params?.merchant_id : undefined;
          const m = typeof asked === 'string' ? await store.get<MerchantState>('merchants', asked) : await currentMerchant(ctx);
          if (!m) throw notFound('merchant');
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
          const body = validate('RotateCredentialsRequest', ctx.params.body ?? {});
          const m = await currentMerchant(ctx);
          return rotateCredential(rt, m, body.credential ?? 'api_key', callerKeyId(ctx), (msg) => callActor(ctx, m.id, msg));
        },
      },

      /** GET /v1/me/rail-policy */
      railPolicy: {
        async handler(ctx: Context) {
          return presentRailPolicy(await currentMerchant(ctx), rt.config.rails);
        },
      },

      /** PUT /v1/me/rail-policy: replaces the policy (null removes it); audited with the one it replaced. */
      setRailPolicy: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate('RailPolicyRequest', ctx.params.body);
          const m = await currentMerchant(ctx);
          const allowed = body.allowed_rails === null ? null : parseRailPolicy(body.allowed_rails, knownRails());
          const reply = await callActor(ctx, m.id, { type: 'set_rail_policy', allowed_rails: allowed });
          return presentRailPolicy(reply.merchant, rt.config.rails);
        },
      },

      /** Ends the overlap of the previous credential at once. */
      revoke: {
        async handler(ctx: Context<Body<unknown>>) {
          const body = validate('RevokeCredentialsRequest', ctx.params.body ?? {});
          const m = await currentMerchant(ctx);
          const credential = body.credential ?? 'api_key';
          const reply = await callActor(ctx, m.id, { type: 'revoke_previous', credential, by_key_id: callerKeyId(ctx) });
          return { credential, revoked: reply.revoked ?? false };
        },
      },
    },
  };
}
