/**
 * Issuing an x402 challenge of a merchant on one rail (the merchant's own resource server asking through
 * POST /v1/x402/challenges, or a buyer at one of its catalog prices): the amount (given, or a published
 * price's, a fiat price converted at a fresh rate), the per-rail minimum, the settlement wallet it pays
 * into, the asset, and the v2 wire's network read from the node. The caller has already checked the rail,
 * the merchant's rail policy and the environment gate.
 */
import type { Doc } from '../store/port.ts';
import type { Checked } from '../http/contract.ts';
import { badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { fromSubunits } from '../core/money.ts';
import { railKey, type Rail } from '../../config/rails.ts';
import { isFiatCurrency, quotePrice, type SessionQuote } from '../rates/quote.ts';
import type { RatesEngine } from '../rates/engine.ts';
import type { WalletDirectory } from '../wallets/directory.ts';
import { CHALLENGES, type ChallengeDoc } from './model.ts';
import { keepChallenge } from './known.ts';
import { railFacts, type X402Env } from './facilitator.ts';
import { buildChallenge, type X402Challenge } from './challenge.ts';
import { paymentRequired, requirementsOf, type PaymentRequired, type PaymentRequirements } from './wire.ts';

/** What a challenge is issued for: the terms of POST /v1/x402/challenges (its rail and lifetime aside). */
export type ChallengeBody = Pick<Checked<'X402ChallengeRequest'>, 'resource' | 'amount_subunits' | 'price_id' | 'description'>;

export interface IssueDeps {
  env: X402Env;
  wallets: WalletDirectory;
  rates: RatesEngine;
}

type PriceRow = Doc & {
  merchant_id: string;
  status: string;
  amount_subunits: string;
  currency_or_token: string;
  decimals: number;
  allowed_payment_methods: string[] | null;
};

/** The amount a challenge asks on `rail`: amount_subunits, or a published price of the merchant's (fiat converted now). */
export async function amountOf(
  d: IssueDeps,
  b: Pick<ChallengeBody, 'amount_subunits' | 'price_id'>,
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
  const price = await d.env.store.get<PriceRow>('catalog_prices', b.price_id!);
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
  const { subunits, quote } = await quotePrice(
    d.rates,
    { currency: price.currency_or_token, minor: BigInt(price.amount_subunits), digits: price.decimals },
    rail,
    d.env.now(),
  );
  return { amount: subunits.toString(), price_id: b.price_id!, quote };
}

/** Stores a challenge of the merchant on the rail, paid into its settlement wallet there. */
export async function issueChallenge(
  d: IssueDeps,
  merchantId: string,
  rail: Rail,
  b: ChallengeBody,
  ttlMs: number,
): Promise<{ doc: ChallengeDoc; quote?: SessionQuote }> {
  const { amount, price_id, quote } = await amountOf(d, b, merchantId, rail);
  // a challenge must bring more than settling it costs the platform (lib/x402/costs.ts)
  const minimum = d.env.minimum(rail);
  if (BigInt(amount) < minimum)
    throw badRequest(
      `the amount is below the x402 minimum of ${railKey(rail)}: ${minimum} smallest units (${fromSubunits(minimum, rail.decimals)} ${rail.token})`,
      {
        field: b.price_id !== undefined ? 'price_id' : 'amount_subunits',
        remediation: `Charge at least ${minimum} smallest units on ${railKey(rail)} (X402_MIN_AMOUNTS sets the minimum per rail).`,
      },
    );
  // paid into the merchant's settlement wallet, where session deposits go too
  const wallet = await d.wallets.defaultWallet(merchantId, rail.chain, rail.network);
  // without a configured contract or mint the asset is the symbol: only agent wallets can pay then
  const asset = d.env.tokenOf(rail) ?? rail.token;
  // the v2 wire's network, read from the node (null: standard clients cannot pay this rail)
  const facts = await railFacts(d.env, rail).catch(() => null);
  const now = d.env.now();
  const doc: ChallengeDoc = {
    id: newId('xch'),
    merchant_id: merchantId,
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
    expires_at: new Date(now.getTime() + ttlMs).toISOString(),
    created_at: now.toISOString(),
    redeemed_at: null,
  };
  await d.env.store.write([{ op: 'insert', coll: CHALLENGES, doc }]);
  keepChallenge(d.env.store, doc);
  return { doc, ...(quote ? { quote } : {}) };
}

/** The challenge's `accepts[]` entry on the x402 v2 wire; null when standard clients cannot pay its rail. */
export async function v2Requirements(env: X402Env, c: ChallengeDoc): Promise<PaymentRequirements | null> {
  const rail = env.rails.find((r) => r.chain === c.chain && r.network === c.network && r.token === c.token);
  const facts = rail && c.x402_network ? await railFacts(env, rail).catch(() => null) : null;
  if (!facts) return null;
  return requirementsOf(
    { challenge_id: c.id, amount_subunits: c.amount_subunits, asset: c.asset, pay_to: c.pay_to, expires_at: c.expires_at },
    facts,
    env.now(),
  );
}

/** The x402 v2 PaymentRequired of a challenge (null: not payable by standard clients). */
export async function v2Offer(env: X402Env, c: ChallengeDoc): Promise<PaymentRequired | null> {
  const r = await v2Requirements(env, c);
  return r ? paymentRequired([r], { url: c.resource, description: c.description }) : null;
}

/** The spec's flat X402Challenge of a stored challenge. */
export function flatChallenge(c: ChallengeDoc): X402Challenge {
  return buildChallenge({
    id: c.id,
    network: c.network as 'testnet' | 'mainnet',
    amount_subunits: c.amount_subunits,
    asset: c.asset,
    pay_to: c.pay_to,
    resource: c.resource,
    description: c.description ?? undefined,
  });
}
