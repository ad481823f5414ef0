/**
 * x402 (facade): challenges for a merchant's resource server (the spec's flat challenge and the x402 v2
 * PaymentRequired), redemption of the proofs its clients send back (lib/x402/redeem.ts), and this service
 * as a facilitator for resource servers on the ecosystem's middleware (lib/x402/facilitator.ts). Runs the
 * scanner that finishes settlements a redeem stopped waiting for.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import type { Doc } from '../lib/store/port.ts';
import { callingMerchant, loadCallingMerchant } from '../lib/merchants/caller.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { REMEDIATION, badRequest, conflict, notFound, ServiceError } from '../lib/core/errors.ts';
import { networkForbidden, networkGate } from '../lib/core/environment.ts';
import { newId } from '../lib/core/ids.ts';
import { parseDuration } from '../lib/core/duration.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { findRail, railKey, type Rail } from '../config/rails.ts';
import { isFiatCurrency, quotePrice, type SessionQuote } from '../lib/rates/quote.ts';
import { RatesEngine } from '../lib/rates/engine.ts';
import { loadSeedPhrase } from '../lib/addresses/addresses.ts';
import { openWalletDirectory } from '../lib/wallets/directory.ts';
import { PoolSigner } from '../lib/chains/signer.ts';
import { buildChallenge, encodeHeader } from '../lib/x402/challenge.ts';
import { ProofError } from '../lib/x402/proof.ts';
import { Broadcaster } from '../lib/chains/broadcast/outbox.ts';
import { configuredDrivers } from '../lib/chains/broadcast/drivers.ts';
import { gasWalletRef } from '../lib/treasury/gas-wallet.ts';
import { X402Redeemer, CHALLENGES, REDEMPTIONS, type ChallengeDoc, type RedemptionDoc } from '../lib/x402/redeem.ts';
import { authorizationUse } from '../lib/x402/chain-facts.ts';
import { x402MinimumSubunits } from '../lib/x402/costs.ts';
import { paymentRequired, requirementsOf, type PaymentRequired } from '../lib/x402/wire.ts';
import { railFacts, supported, verify, settle, type FacilitatorRequest, type X402Env } from '../lib/x402/facilitator.ts';
import { fromSubunits } from '../lib/core/money.ts';
import type { SpendAttemptDoc } from '../lib/spend/attempts.ts';
import { limitViolation } from '../lib/ops/alerts/index.ts';
import { checkRailPolicy } from '../lib/merchants/rail-policy.ts';
import type { AbuseLabels } from '../lib/runtime/metrics.ts';

type Http = { body?: unknown; params?: Record<string, string | undefined> };
interface ChallengeBody {
  resource: string;
  amount_subunits?: string;
  price_id?: string;
  paymentMethod: { chain: string; network: string; token: string };
  description?: string;
  expires_in?: string;
}

export const CHALLENGE_TTL_DEFAULT = '5m';
const TTL_MIN_MS = 10_000;
const TTL_MAX_MS = 86_400_000;

export function createX402Service(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  let signer: PoolSigner | null = null;
  let redeemer: X402Redeemer | null = null;
  let scanner: DueScanner<RedemptionDoc> | null = null;
  let broker: { call: Context['call'] } | null = null;
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
        executeAttempt: (attempt_id, wallet_id) => broker!.call('agents.execute', { attempt_id, wallet_id }) as Promise<SpendAttemptDoc>,
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

  /** The x402 v2 PaymentRequired of a challenge: one `accepts[]` entry when standard clients can pay its rail. */
  async function v2Offer(c: ChallengeDoc): Promise<PaymentRequired | null> {
    const rail = findRail(config.rails, c.chain, c.network, c.token);
    const facts = rail && c.x402_network ? await railFacts(env, rail).catch(() => null) : null;
    if (!facts) return null;
    const requirements = requirementsOf(
      { challenge_id: c.id, amount_subunits: c.amount_subunits, asset: c.asset, pay_to: c.pay_to, expires_at: c.expires_at },
      facts,
      rt.now(),
    );
    return paymentRequired([requirements], { url: c.resource, description: c.description });
  }

  async function amountOf(
    b: ChallengeBody,
    merchantId: string,
    rail: Rail,
  ): Promise<{ amount: string; price_id: string | null; quote?: SessionQuote }> {
    if ((b.amount_subunits === undefined) === (b.price_id === undefined))
      throw badRequest('send exactly one of amount_subunits and price_id', {
        field: 'amount_subunits',
        remediation: 'Send amount_subunits or price_id, not both and not neither.',
      });
    if (b.amount_subunits !== undefined) {
      if (!/^[1-9]\d{0,77}$/.test(b.amount_subunits))
        throw badRequest('amount_subunits must be a positive integer of smallest units, as a digit string', { field: 'amount_subunits' });
      return { amount: b.amount_subunits, price_id: null };
    }
    const price = await store.get<
      Doc & {
        merchant_id: string;
        status: string;
        amount_subunits: string;
        currency_or_token: string;
        decimals: number;
        allowed_payment_methods: string[] | null;
      }
    >('catalog_prices', b.price_id!);
    if (!price || price.merchant_id !== merchantId) throw notFound('price');
    if (price.status !== 'published')
      throw conflict(`price ${b.price_id} is ${price.status}; only a published price can be charged`, { field: 'price_id' });
    const fiat = isFiatCurrency(price.currency_or_token);
    if (
      (!fiat && price.currency_or_token !== rail.token) ||
      (price.allowed_payment_methods && !price.allowed_payment_methods.includes(railKey(rail)))
    ) {
      throw badRequest(`price ${b.price_id} cannot be paid on ${railKey(rail)}`, { field: 'price_id' });
    }
    if (!fiat) return { amount: price.amount_subunits, price_id: b.price_id! };
    // a price in fiat: the challenge asks for the tokens it is worth now (rounded up), locked with the challenge
    const minor = BigInt(price.amount_subunits);
    const { subunits, quote } = await quotePrice(
      rates,
      { currency: price.currency_or_token, minor, digits: price.decimals },
      rail,
      rt.now(),
    );
    return { amount: subunits.toString(), price_id: b.price_id!, quote };
  }

  /**
   * The challenge as both answers show it: the spec's X402Challenge and its header, the x402 v2 offer when
   * standard clients can pay its rail, the chain and the fee payer.
   */
  async function presentChallenge(c: ChallengeDoc) {
    const challenge = buildChallenge({
      id: c.id,
      network: c.network as 'testnet' | 'mainnet',
      amount_subunits: c.amount_subunits,
      asset: c.asset,
      pay_to: c.pay_to,
      resource: c.resource,
      description: c.description ?? undefined,
    });
    const offer = await v2Offer(c);
    return {
      challenge,
      header: encodeHeader(challenge),
      ...(offer ? { payment_required: offer } : {}),
      chain: c.chain,
      fee_payer: gasWallet(c.chain, c.network),
    };
  }

  function refuse(e: unknown): never {
    if (e instanceof ProofError) {
      if (e.reason === 'malformed') throw badRequest(e.message, { field: 'proof' });
      if (e.reason === 'unknown_challenge') throw new ServiceError(404, `${e.reason}: ${e.message}`, 'NOT_FOUND');
      // 402: the proof does not pay (the reason code leads the message)
      throw new ServiceError(402, `${e.reason}: ${e.message}`, 'PAYMENT_REFUSED');
    }
    throw e;
  }

  return {
    name: 'x402',
    actions: {
      createChallenge: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          const b = validate<ChallengeBody>('X402ChallengeRequest', ctx.params.body);
          const pm = b.paymentMethod;
          const rail = findRail(config.rails, pm.chain, pm.network, pm.token);
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
          const { amount, price_id, quote } = await amountOf(b, caller.id, rail);
          // a challenge must bring more than settling it costs the platform (lib/x402/costs.ts)
          const minimum = env.minimum(rail);
          if (BigInt(amount) < minimum)
            throw badRequest(
              `the amount is below the x402 minimum of ${railKey(rail)}: ${minimum} smallest units (${fromSubunits(minimum, rail.decimals)} ${rail.token})`,
              {
                field: b.price_id !== undefined ? 'price_id' : 'amount_subunits',
                remediation: `Charge at least ${minimum} smallest units on ${railKey(rail)} (X402_MIN_AMOUNTS sets the minimum per rail).`,
              },
            );
          // paid into the merchant's settlement wallet, where session deposits go too
          const wallet = await wallets.defaultWallet(caller.id, rail.chain, rail.network);
          // without a configured contract or mint the asset is the symbol: only agent wallets can pay then
          const asset = (rail.token === 'USDC' ? config.chains[rail.chain][rail.network].usdcToken : '') || rail.token;
          // the v2 wire's network, read from the node (null: standard clients cannot pay this rail)
          const facts = await railFacts(env, rail).catch(() => null);
          const now = rt.now();
          const doc: ChallengeDoc = {
            id: newId('xch'),
            merchant_id: caller.id,
            wallet_id: wallet.id,
            chain: rail.chain,
            network: rail.network,
            token: rail.token,
            decimals: rail.decimals,
            asset,
            pay_to: wallet.address,
            amount_subunits: amount,
            resource: b.resource,
            description: b.description ?? null,
            price_id,
            ...(quote ? { quote } : {}),
            status: 'open',
            x402_network: facts?.network ?? null,
            source: 'challenge',
            expires_at: new Date(now.getTime() + ttl).toISOString(),
            created_at: now.toISOString(),
            redeemed_at: null,
          };
          await store.write([{ op: 'insert', coll: CHALLENGES, doc }]);
          created(ctx, `/v1/x402/challenges/${doc.id}`);
          return { challenge_id: doc.id, expires_at: doc.expires_at, ...(await presentChallenge(doc)), ...(quote ? { quote } : {}) };
        },
      },
      getChallenge: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = callingMerchant(ctx);
          const c = await store.get<ChallengeDoc>(CHALLENGES, ctx.params.params?.challenge_id ?? '');
          if (!c || c.merchant_id !== caller.merchant_id) throw notFound('challenge');
          const expired = c.status === 'open' && c.expires_at <= rt.now().toISOString();
          return {
            challenge_id: c.id,
            status: expired ? 'expired' : c.status,
            expires_at: c.expires_at,
            redeemed_at: c.redeemed_at,
            ...(await presentChallenge(c)),
          };
        },
      },
      redeem: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = callingMerchant(ctx);
          const b = validate<{ proof: string; resource: string }>('X402RedeemRequest', ctx.params.body);
          try {
            const r = await engine().redeem(b.proof, b.resource, caller.merchant_id);
            if (r.status === 'pending') requestMeta(ctx).$statusCode = 202;
            return r;
          } catch (e) {
            refuse(e);
          }
        },
      },
      /** GET /v1/x402/facilitator/supported */
      facilitatorSupported: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          callingMerchant(ctx);
          return supported(env);
        },
      },
      /** POST /v1/x402/facilitator/verify */
      facilitatorVerify: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          return verify(env, caller, validate<FacilitatorRequest>('X402FacilitatorRequest', ctx.params.body));
        },
      },
      /** POST /v1/x402/facilitator/settle */
      facilitatorSettle: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const caller = await loadCallingMerchant(store, ctx);
          return settle(env, caller, validate<FacilitatorRequest>('X402FacilitatorRequest', ctx.params.body));
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
        handle: (r) => engine().check(r),
      });
      scanner.start();
    },
    async stopped() {
      await scanner?.stop();
      await signer?.close();
    },
  };
}
