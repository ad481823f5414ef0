/**
 * x402 (facade): challenges for a merchant's resource server (the spec's flat challenge and the x402 v2
 * PaymentRequired), redemption of the proofs its clients send back (lib/x402/redeem.ts), and this service
 * as a facilitator for resource servers on the ecosystem's middleware (lib/x402/facilitator.ts). Runs the
 * scanner that finishes settlements a redeem stopped waiting for.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import { callingMerchant, loadCallingMerchant, type CallingMerchant } from '../lib/merchants/caller.ts';
import type { Checked } from '../lib/http/contract.ts';
import { created, header, status } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { REMEDIATION, badRequest, conflict, notFound, ServiceError } from '../lib/core/errors.ts';
import { networkForbidden, networkGate } from '../lib/core/environment.ts';
import { parseDuration } from '../lib/core/duration.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { findRail, type Rail } from '../config/rails.ts';
import { RatesEngine } from '../lib/rates/engine.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { openWalletDirectory } from '../lib/wallets/directory.ts';
import { PoolSigner } from '../lib/chains/signer.ts';
import { encodeHeader } from '../lib/x402/challenge.ts';
import { ProofError } from '../lib/x402/proof.ts';
import { Broadcaster } from '../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../lib/chains/broadcast/drivers.ts';
import { gasWalletRef } from '../lib/treasury/gas-wallet.ts';
import { X402Redeemer } from '../lib/x402/redeem.ts';
import { CHALLENGES, REDEMPTIONS, type ChallengeDoc, type RedemptionDoc } from '../lib/x402/model.ts';
import { authorizationUse } from '../lib/x402/chain-facts.ts';
import { x402MinimumSubunits } from '../lib/x402/costs.ts';
import { supported, verify, settle, type X402Env } from '../lib/x402/facilitator.ts';
import { issueChallenge, flatChallenge, v2Offer, v2Requirements, type IssueDeps } from '../lib/x402/issue.ts';
import { describe, discoveryResources, priceRails, publishedPrice, purchaseOf, purchasePath } from '../lib/x402/catalog.ts';
import { paymentRequired } from '../lib/x402/wire.ts';
import { paymentRequiredHeader } from '@stablecoin-payments/sdk/x402';
import type { SpendAttemptDoc } from '../lib/spend/attempts.ts';
import { limitViolation } from '../lib/ops/alerts/index.ts';
import { checkRailPolicy } from '../lib/merchants/rail-policy.ts';
import type { AbuseLabels } from '../lib/runtime/metrics.ts';

type Http = { body?: unknown; params?: Record<string, string | undefined> };

export const CHALLENGE_TTL_DEFAULT = '5m';
const TTL_MIN_MS = 10_000;
const TTL_MAX_MS = 86_400_000;

/**
 * What the x402 actions share: the redeemer and its outbox (made on first use), the facilitator's view of
 * the chains, what issuing a challenge needs, and how a challenge is shown.
 */
function x402Parts(rt: Runtime, call: () => Context['call']) {
  const { store, config } = rt;
  let signer: PoolSigner | null = null;
  let redeemer: X402Redeemer | null = null;
  const wallets = openWalletDirectory(store, config.dataDir, () => rt.now());
  const rates = new RatesEngine(store, config, () => rt.now());

  const rpcUrl = (chain: string, network: string) =>
    config.chains[chain as 'ethereum' | 'solana']?.[network as 'testnet' | 'mainnet']?.rpcUrl || null;

  function gasWallet(chain: 'ethereum' | 'solana', network: string): string {
    signer ??= new PoolSigner(loadSeedPhrase(config.dataDir).phrase);
    return signer.address(gasWalletRef(chain, network));
  }

  function engine(): X402Redeemer {
    if (!redeemer) {
      signer ??= new PoolSigner(loadSeedPhrase(config.dataDir).phrase);
      // the outbox's own scanner runs where payouts run; this instance only creates and moves x402 rows
      const broadcaster = new Broadcaster({
        store,
        driver: configuredDrivers(config, signer),
        now: () => rt.now(),
        pollIntervalMs: config.moneyOut.pollIntervalMs,
        rebroadcastMs: config.moneyOut.rebroadcastMs,
        bumpAfterMs: config.moneyOut.bumpAfterMs,
      });
      redeemer = new X402Redeemer({
        store,
        broadcaster,
        rpcUrl,
        gasWallet,
        now: () => rt.now(),
        settleTimeoutMs: config.agents.settleTimeoutMs,
        authorizationUse: (network, token, a) =>
          authorizationUse(rpcUrl('ethereum', network)!, token, a, config.chains.ethereum[network as 'testnet' | 'mainnet'].confirmations),
        executeAttempt: (attempt_id, wallet_id) => call()('agents.execute', { attempt_id, wallet_id }) as Promise<SpendAttemptDoc>,
      });
    }
    return redeemer;
  }

  const env: X402Env = {
    store,
    rails: config.rails,
    rpcUrl,
    tokenOf: (rail) => (rail.token === 'USDC' ? config.chains[rail.chain][rail.network].usdcToken || null : null),
    gasWallet,
    minimum: (rail) => x402MinimumSubunits(rail, config.agents.x402MinAmounts),
    redeemer: engine,
    now: () => rt.now(),
  };

  const issue: IssueDeps = { env, wallets, rates };

  /**
   * The challenge as both answers show it: the spec's X402Challenge and its header, the x402 v2 offer when
   * standard clients can pay its rail, the chain and the fee payer.
   */
  async function presentChallenge(c: ChallengeDoc) {
    const challenge = flatChallenge(c);
    const offer = await v2Offer(env, c);
    return {
      challenge,
      header: encodeHeader(challenge),
      ...(offer ? { payment_required: offer } : {}),
      chain: c.chain,
      fee_payer: gasWallet(c.chain, c.network),
    };
  }

  return { env, issue, engine, gasWallet, presentChallenge, close: () => signer?.close() };
}

type X402Parts = ReturnType<typeof x402Parts>;

/** A proof that does not pay, as the API answers it. */
function refuse(e: unknown): never {
  if (e instanceof ProofError) {
    if (e.reason === 'malformed') throw badRequest(e.message, { field: 'proof' });
    if (e.reason === 'unknown_challenge') throw new ServiceError(404, `${e.reason}: ${e.message}`, 'NOT_FOUND');
    // 402: the proof does not pay (the reason code leads the message)
    throw new ServiceError(402, `${e.reason}: ${e.message}`, 'PAYMENT_REFUSED');
  }
  throw e;
}

/**
 * The rail and lifetime of POST /v1/x402/challenges: an enabled rail, inside the merchant's rail policy
 * and its own network (the environment gate), and expires_in within bounds.
 */
function challengeTerms(
  rt: Runtime,
  caller: CallingMerchant,
  b: Checked<'X402ChallengeRequest'>,
  ctx: Context,
): { rail: Rail; ttl: number } {
  const pm = b.paymentMethod;
  const rail = findRail(rt.config.rails, pm.chain, pm.network, pm.token);
  if (!rail)
    throw badRequest(`(${pm.chain}, ${pm.network}, ${pm.token}) is not an enabled rail; see GET /v1/payment_methods`, {
      field: 'paymentMethod',
      remediation: REMEDIATION.rails,
    });
  // no challenge is payable on a rail the merchant's policy excludes
  checkRailPolicy(caller.rail_policy, rail);
  // the environment gate: a live merchant's challenge on testnet would be paid in free tokens
  const refusal = networkGate(caller, rail.network, 'x402 challenges');
  if (refusal) {
    if (refusal.abuse)
      limitViolation(
        rt,
        {
          signal: 'limit_violation',
          outcome: 'mainnet_kyc_required',
          environment: caller.sandbox ? 'sandbox' : 'live',
          chain: rail.chain,
          network: rail.network,
          token: rail.token,
        } as AbuseLabels & { signal: 'limit_violation' },
        { merchant_id: caller.id, ctx },
      );
    throw networkForbidden(refusal, 'paymentMethod.network', {
      sandbox: 'Set paymentMethod.network to testnet; mainnet needs a live merchant account.',
      live: 'Set paymentMethod.network to mainnet; testnet challenges belong to sandbox merchants.',
    });
  }
  const ttl = parseDuration(b.expires_in ?? CHALLENGE_TTL_DEFAULT);
  if (ttl === null || ttl < TTL_MIN_MS || ttl > TTL_MAX_MS)
    throw badRequest('expires_in must be a duration such as 30s, 5m or 1h, from 10s to 24h', {
      field: 'expires_in',
      remediation: 'Send expires_in as a whole number and a unit, from 10s to 24h, e.g. "5m".',
    });
  return { rail, ttl };
}

/**
 * GET /v1/catalog/prices/{price_id}/x402 (no credentials): a published price bought with x402. 402 with a
 * challenge per payable rail; with a proof (PAYMENT-SIGNATURE, X-Service-Payment, X-PAYMENT) redeemed for
 * the price's merchant: 200 with the purchase, 202 while settling.
 */
async function payPrice(rt: Runtime, x: X402Parts, ctx: Context<Http>) {
  const id = ctx.params.params?.price_id ?? '';
  const p = await publishedPrice(rt.store, id);
  if (!p) throw notFound(`price ${id.slice(0, 64)}`);
  const resource = purchasePath(p.price.id);
  const h = requestMeta(ctx).headers ?? {};
  const proof = h['payment-signature'] ?? h['x-service-payment'] ?? h['x-payment'];
  let error: string | undefined;
  if (proof) {
    try {
      const r = await x.engine().redeem(proof, resource, p.merchant.id);
      header(ctx, 'PAYMENT-RESPONSE', r.payment_response);
      if (r.status === 'settled') return purchaseOf(p, r);
      // paid, not yet settled: a new 402 would make the buyer pay twice
      status(ctx, 202);
      header(ctx, 'Retry-After', '2');
      return { status: 'payment_pending', challenge_id: r.challenge_id, retry: 'send the same payment header again' };
    } catch (e) {
      if (!(e instanceof ProofError)) throw e;
      error = `${e.reason}: ${e.message}`;
    }
  }
  const rails = priceRails(x.issue, p);
  const docs: ChallengeDoc[] = [];
  for (const rail of rails)
    docs.push(
      (await issueChallenge(x.issue, p.merchant.id, rail, { resource, price_id: p.price.id, description: describe(p) }, 300_000)).doc,
    );
  const accepts = (await Promise.all(docs.map((d) => v2Requirements(x.env, d)))).filter((a) => a !== null);
  if (accepts.length === 0)
    throw conflict(`price ${p.price.id} cannot be paid with x402 here`, {
      field: 'price_id',
      remediation: 'Use POST /v1/catalog/prices/{price_id}/checkout-intent and a payment session instead.',
    });
  const flat = flatChallenge(docs[0]);
  const url = `${rt.config.publicUrl}${resource}`;
  header(
    ctx,
    'PAYMENT-REQUIRED',
    paymentRequiredHeader(flat, paymentRequired(accepts, { url, description: describe(p), mimeType: 'application/json' }), url, error),
  );
  header(ctx, 'X-PAYMENT-REQUIRED', encodeHeader(flat));
  status(ctx, 402);
  return {
    x402Version: 1,
    error: error ?? 'payment required',
    accepts: [flat],
    chain: docs[0].chain,
    fee_payer: x.gasWallet(docs[0].chain, docs[0].network),
  };
}

export function createX402Service(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  let broker: { call: Context['call'] } | null = null;
  let scanner: DueScanner<RedemptionDoc> | null = null;
  const x = x402Parts(rt, () => broker!.call.bind(broker));

  return {
    name: 'x402',
    actions: {
      createChallenge: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          const b = validate('X402ChallengeRequest', ctx.params.body);
          const { rail, ttl } = challengeTerms(rt, caller, b, ctx);
          const { doc, quote } = await issueChallenge(x.issue, caller.id, rail, b, ttl);
          created(ctx, `/v1/x402/challenges/${doc.id}`);
          return { challenge_id: doc.id, expires_at: doc.expires_at, ...(await x.presentChallenge(doc)), ...(quote ? { quote } : {}) };
        },
      },
      getChallenge: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = callingMerchant(ctx);
          const c = await store.get<ChallengeDoc>(CHALLENGES, ctx.params.params?.challenge_id ?? '');
          if (!c || c.merchant_id !== caller.merchant_id) throw notFound('challenge');
          // an agent-wallet redeem leaves the challenge row as issued: its settled redemption redeemed it
          const r = c.status === 'open' ? await store.get<RedemptionDoc>(REDEMPTIONS, c.id) : null;
          const redeemed_at = r?.status === 'settled' ? r.settled_at : c.redeemed_at;
          const status = redeemed_at ? 'redeemed' : c.status;
          const expired = status === 'open' && c.expires_at <= rt.now().toISOString();
          return {
            challenge_id: c.id,
            status: expired ? 'expired' : status,
            expires_at: c.expires_at,
            redeemed_at,
            ...(await x.presentChallenge(c)),
          };
        },
      },
      redeem: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = callingMerchant(ctx);
          const b = validate('X402RedeemRequest', ctx.params.body);
          try {
            const r = await x.engine().redeem(b.proof, b.resource, caller.merchant_id);
            if (r.status === 'pending') requestMeta(ctx).$statusCode = 202;
            return r;
          } catch (e) {
            refuse(e);
          }
        },
      },
      /** GET /v1/catalog/prices/{price_id}/x402 (no credentials): a published price bought with x402 */
      payPrice: {
        visibility: 'published',
        handler: (ctx: Context<Http>) => payPrice(rt, x, ctx),
      },
      /** GET /v1/x402/facilitator/discovery/resources (no credentials): payable catalog prices, bazaar shape */
      discoveryResources: {
        visibility: 'published',
        async handler(ctx: Context<Http & { query?: Record<string, string> }>) {
          const q = validate('X402DiscoveryQuery', ctx.params.query ?? {}, 'query');
          return discoveryResources(x.issue, config.publicUrl, q);
        },
      },
      /** GET /v1/x402/facilitator/supported */
      facilitatorSupported: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          callingMerchant(ctx);
          return supported(x.env);
        },
      },
      /** POST /v1/x402/facilitator/verify */
      facilitatorVerify: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          return verify(x.env, caller, validate('X402FacilitatorRequest', ctx.params.body));
        },
      },
      /** POST /v1/x402/facilitator/settle */
      facilitatorSettle: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          return settle(x.env, caller, validate('X402FacilitatorRequest', ctx.params.body));
        },
      },
    },
    started(this: { broker: { call: Context['call'] }; logger: { warn(...a: unknown[]): void } }) {
      broker = this.broker;
      scanner = new DueScanner<RedemptionDoc>({
        name: 'x402 settlements',
        store,
        coll: REDEMPTIONS,
        dueField: 'next_check_at',
        filter: { status: 'settling' },
        leaseMs: 15_000,
        intervalMs: config.agents.scanIntervalMs,
        now: () => rt.now(),
        log: this.logger,
        handle: (r) => x.engine().check(r),
      });
      scanner.start();
    },
    async stopped() {
      await scanner?.stop();
      await x.close();
    },
  };
}
