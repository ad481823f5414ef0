/**
 * The creation policy of payment sessions as pure decisions (no store, no broker): what a create or
 * demo body asks for, checked in the documented order, or a refusal that says what to change. A refusal
 * that is also an abuse signal carries its outcome, so the facade can count it (lib/runtime/metrics.ts).
 *
 * Order on POST /v1/payment_sessions (after the body schema):
 *   paymentMethod (methodID 0 only) → rail (chain, network, token) → expires_in bounds → amount (decimals,
 *   min_amount) or price (currency, minor digits) → metadata size → the merchant's rail policy
 *   (lib/merchants/rail-policy.ts) → sandbox/testnet → mainnet KYC → for an amount: SESSION_AMOUNT_LIMIT,
 *   the catalog checkout reference; for a price: the checkout reference, the quote at a fresh rate
 *   (lib/rates/quote.ts), the converted amount's min_amount, SESSION_AMOUNT_LIMIT; then the facade
 *   reserves DAILY_VOLUME_LIMIT (lib/sessions/volume.ts) and allocates the address.
 */
import { FieldChecks, REMEDIATION, ServiceError, badRequest } from '../core/errors.ts';
import { AmountError, checkAmountBound, floorSubunits, fromSubunits, toApiNumber, toSubunits } from '../core/money.ts';
import { checkMinimum, parseAmount } from '../core/amount.ts';
import { METADATA_MAX_BYTES } from '../core/metadata.ts';
import { parseDuration } from '../core/duration.ts';
import { networkForbidden, networkGate } from '../core/environment.ts';
import { findRail, type Rail } from '../../config/rails.ts';
import type { AbuseOutcome, AbuseSignal, Environment } from '../runtime/metrics.ts';
import { checkReturnUrl } from '../checkout/return-url.ts';
import { FiatPriceError, parseFiatAmount, type FiatAmount, type SessionQuote } from '../rates/quote.ts';
import type { Checked } from '../http/contract.ts';

/** expires_in bounds (documented in the README and the OpenAPI description) */
export const EXPIRES_IN_MIN_MS = 10_000;
export const EXPIRES_IN_MAX_MS = 7 * 86_400_000;
export const DEMO_EXPIRES_IN_MAX_MS = 3_600_000;
export const DEMO_DEFAULT_EXPIRES_IN = '15m';
/** demo sessions are for trying the flow: no amount beyond this many token units */
export const DEMO_AMOUNT_MAX = 1000;

/** POST /v1/payment_sessions and its demo sibling, as openapi.json's schemas (checked before these rules run). */
export type CreateBody = Checked<'CreatePaymentSessionRequest'>;
export type PaymentMethodInput = NonNullable<CreateBody['paymentMethod']>;
export type DemoBody = Checked<'CreateDemoSessionRequest'>;

/** A refusal that is also an abuse signal (counted by the facade, then sent to the client). */
export class PolicyRefusal extends ServiceError {
  readonly signal: AbuseSignal;
  readonly outcome: AbuseOutcome;
  readonly rail: Rail;
  constructor(error: ServiceError, signal: AbuseSignal, outcome: AbuseOutcome, rail: Rail) {
    super(error.code, error.message, error.type, error.data);
    this.signal = signal;
    this.outcome = outcome;
    this.rail = rail;
  }
}

const refuse = (error: ServiceError, outcome: AbuseOutcome, rail: Rail) => new PolicyRefusal(error, 'limit_violation', outcome, rail);

export function parseExpiresIn(value: string, maxMs: number, maxText: string): number {
  const ms = parseDuration(value);
  const details = {
    field: 'expires_in',
    remediation: `Send expires_in as a whole number and a unit, from 10s to ${maxText}, e.g. "15m" or "1h".`,
  };
  if (ms === null)
    throw badRequest(
      `expires_in must be a duration such as 15m, 45m or 1h (a whole number followed by s, m, h or d), between 10s and ${maxText}`,
      details,
    );
  if (ms < EXPIRES_IN_MIN_MS || ms > maxMs) throw badRequest(`expires_in must be between 10s and ${maxText}; got ${value}`, details);
  return ms;
}

/** The rail a create body names (paymentMethod, or its legacy name payment_method). */
export function resolvePaymentMethod(body: CreateBody, rails: Rail[]): Rail {
  const [a, b] = [body.paymentMethod, body.payment_method];
  if (a && b && (a.methodID !== b.methodID || a.chain !== b.chain || a.network !== b.network || a.token !== b.token)) {
    throw badRequest('send paymentMethod only (payment_method is its legacy name); the two differ', {
      field: 'payment_method',
      remediation: 'Remove payment_method and send the rail in paymentMethod only.',
    });
  }
  const pm = a ?? b;
  const name = a ? 'paymentMethod' : 'payment_method';
  if (!pm)
    throw badRequest('body.paymentMethod is required: {methodID, chain, token, network}', {
      field: 'paymentMethod',
      remediation: `Add paymentMethod {methodID: 0, chain, token, network}. ${REMEDIATION.rails}`,
    });
  if (pm.methodID === 1)
    throw badRequest(
      'methodID 1 (fiat) is not available: no fiat rail is enabled; use methodID 0 with a rail from GET /v1/payment_methods',
      { field: `${name}.methodID`, remediation: `Set ${name}.methodID to 0 (on-chain crypto).` },
    );
  const rail = findRail(rails, pm.chain, pm.network, pm.token);
  if (!rail)
    throw badRequest(
      `no enabled rail is ${pm.chain}:${pm.network}:${pm.token}; choose a (chain, network, token) triple from GET /v1/payment_methods`,
      { field: name, remediation: REMEDIATION.rails },
    );
  return rail;
}

export interface CreateRequest {
  rail: Rail;
  expected: bigint;
  expiresMs: number;
  metadata: Record<string, unknown>;
  /** the locked quote of a price in fiat: expected was converted from it */
  quote?: SessionQuote;
  return_url?: string;
}

/** What the create rules take from configuration besides the rails. */
export interface CreateOptions {
  /** WEBHOOK_ALLOW_PRIVATE: local development, where a plain-http return_url is fine */
  allowHttpReturnUrl?: boolean;
}

/** A create body decided before any rate is read: a token amount, or a price in fiat still to be quoted. */
export type CreateDraft = Omit<CreateRequest, 'expected' | 'quote'> &
  ({ expected: bigint; price?: undefined } | { expected?: undefined; price: FiatAmount });

/** The price of a create body in fiat: currency and minor digits checked, no rate read yet. */
export function requestedPrice(price: { amount: string; currency: string }): FiatAmount {
  try {
    return parseFiatAmount(price.amount, price.currency);
  } catch (e) {
    if (e instanceof FiatPriceError) throw badRequest(e.message, { field: `price.${e.field}` });
    throw e;
  }
}

/** The amount a quote converted a price to, checked like a token amount (bound, min_amount). */
export function quotedRequest(draft: Extract<CreateDraft, { price: FiatAmount }>, units: bigint, quote: SessionQuote): CreateRequest {
  const { rail } = draft;
  try {
    checkAmountBound(units, rail.decimals);
  } catch (e) {
    if (e instanceof AmountError)
      throw badRequest(`price.amount converts to more than the maximum of a session: ${e.message}`, { field: 'price.amount' });
    throw e;
  }
  checkMinimum(units, rail, quote);
  return {
    rail,
    expiresMs: draft.expiresMs,
    metadata: draft.metadata,
    ...(draft.return_url ? { return_url: draft.return_url } : {}),
    expected: units,
    quote,
  };
}

/** amount (token units) or amount_subunits (exact); both, when sent, must name the same amount. */
export function requestedAmount(body: Pick<CreateBody, 'amount' | 'amount_subunits'>, rail: Rail): bigint {
  if (body.amount_subunits === undefined) {
    if (body.amount === undefined)
      throw badRequest(
        'amount is required (token units), or amount_subunits (smallest units, a digit string), or price (an amount in fiat: {amount: "25.00", currency: "USD"})',
        {
          field: 'amount',
          remediation: `Add amount in ${rail.token} (e.g. 12.5), amount_subunits as a digit string of smallest units, or price {amount, currency}.`,
        },
      );
    return parseAmount(body.amount, rail);
  }
  const exact = BigInt(body.amount_subunits);
  if (body.amount !== undefined && parseAmount(body.amount, rail) !== exact) {
    throw badRequest(
      `amount and amount_subunits differ (${body.amount} ${rail.token} is not ${body.amount_subunits} smallest units); send one of them`,
      { field: 'amount_subunits', remediation: 'Send only one of amount and amount_subunits.' },
    );
  }
  return parseAmount(fromSubunits(exact, rail.decimals), rail, 'amount_subunits');
}

export function checkMetadataSize(metadata: Record<string, unknown>): void {
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw badRequest(`metadata is larger than 4KB (${METADATA_MAX_BYTES} bytes as JSON); keep references in it, not documents`, {
      field: 'metadata',
      remediation: `Keep metadata under ${METADATA_MAX_BYTES} bytes of JSON: store ids and references, not documents.`,
    });
  }
}

/** amount (or amount_subunits) or price, exactly one: the token amount, or the price still to be quoted. */
function requestedAmountOrPrice(body: CreateBody, rail: Rail): { expected: bigint } | { price: FiatAmount } {
  if (body.price !== undefined && (body.amount !== undefined || body.amount_subunits !== undefined)) {
    throw badRequest(
      `send exactly one of amount and price: ${body.amount !== undefined ? 'amount' : 'amount_subunits'} names an amount of ${rail.token}, price an amount in fiat that is converted at a fresh rate`,
      { field: 'price', remediation: 'Send either amount (or amount_subunits) in tokens, or price in fiat, not both.' },
    );
  }
  return body.price !== undefined ? { price: requestedPrice(body.price) } : { expected: requestedAmount(body, rail) };
}

/**
 * The rules of a create body, each field checked on its own so that every refusal is listed at once (the
 * first in the documented order leads); fields `checks` already holds refused are skipped.
 */
function checkCreateBody(body: CreateBody, rails: Rail[], checks: FieldChecks, opts: CreateOptions): CreateDraft {
  const railField = body.paymentMethod === undefined && body.payment_method !== undefined ? 'payment_method' : 'paymentMethod';
  const rail =
    checks.refused('paymentMethod') || checks.refused('payment_method')
      ? undefined
      : checks.run(railField, () => resolvePaymentMethod(body, rails));
  const expiresMs = checks.run('expires_in', () => parseExpiresIn(body.expires_in, EXPIRES_IN_MAX_MS, '7d'));
  const amountField = body.price !== undefined ? 'price' : 'amount';
  const amount =
    rail && !checks.refused('amount_subunits') && !checks.refused('amount')
      ? checks.run(amountField, () => requestedAmountOrPrice(body, rail))
      : undefined;
  const metadata = body.metadata ?? {};
  checks.run('metadata', () => checkMetadataSize(metadata));
  const returnUrl =
    body.return_url === undefined ? undefined : checks.run('return_url', () => checkReturnUrl(body.return_url!, !!opts.allowHttpReturnUrl));
  checks.throwIfAny();
  return { rail: rail!, expiresMs: expiresMs!, metadata, ...(returnUrl ? { return_url: returnUrl } : {}), ...amount! } as CreateDraft;
}

/** Everything a create body decides on its own: rail, duration, amount or price, metadata, return_url. */
export function decideCreateBody(body: CreateBody, rails: Rail[], opts: CreateOptions = {}): CreateDraft {
  return checkCreateBody(body, rails, new FieldChecks(), opts);
}

/**
 * Throws the refusal of a body the schema refused (`schemaRefusal`), adding what the rules find wrong in
 * its other fields, so that one answer lists every invalid field.
 */
export function refuseCreateBody(body: unknown, rails: Rail[], schemaRefusal: unknown, opts: CreateOptions = {}): never {
  const checks = new FieldChecks();
  checks.add(schemaRefusal);
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) checkCreateBody(body as CreateBody, rails, checks, opts);
  checks.throwIfAny();
  throw schemaRefusal;
}

/** Whether the KYC status must be read to decide (mainnet for a live merchant). */
export const needsKyc = (rail: Rail, sandbox: boolean): boolean => rail.network === 'mainnet' && !sandbox;

/** The environment gate (lib/core/environment.ts) for a session on the rail: a refusal on mainnet is an abuse signal. */
export function checkNetworkAccess(rail: Rail, sandbox: boolean, kycStatus: string | null | undefined): void {
  const refusal = networkGate({ sandbox, kyc_status: kycStatus }, rail.network, 'payment sessions');
  if (!refusal) return;
  const denied = networkForbidden(refusal, 'paymentMethod.network', {
    sandbox: 'Set paymentMethod.network to testnet; mainnet needs a live merchant account (registered with a bearer token).',
    live: 'Set paymentMethod.network to mainnet, or use a sandbox merchant (a service_sk_test_ key) for testnet.',
  });
  throw refusal.abuse ? refuse(denied, 'mainnet_kyc_required', rail) : denied;
}

/** SESSION_AMOUNT_LIMIT (token units; null: no cap). */
export function checkAmountLimit(expected: bigint, rail: Rail, limit: string | null): void {
  if (limit !== null && expected > floorSubunits(limit, rail.decimals)) {
    throw refuse(
      badRequest(`amount exceeds the per-session limit of ${limit} ${rail.token}; lower the amount or split the payment`, {
        field: 'amount',
        remediation: `Send amount of at most ${limit} ${rail.token} (the SESSION_AMOUNT_LIMIT setting), or split the payment.`,
      }),
      'amount_limit_exceeded',
      rail,
    );
  }
}

/** The DAILY_VOLUME_LIMIT refusal, with what is left today. */
export function dailyVolumeRefusal(limitText: string, rail: Rail, leftSubunits: bigint): PolicyRefusal {
  return refuse(
    badRequest(
      `daily volume limit of ${limitText} ${rail.token} on ${rail.chain} ${rail.network} reached: ${toApiNumber(leftSubunits, rail.decimals)} ${rail.token} left today (UTC); lower the amount or try again tomorrow`,
      {
        field: 'amount',
        remediation: `Send amount of at most ${toApiNumber(leftSubunits, rail.decimals)} ${rail.token} today, or wait for the next UTC day (the DAILY_VOLUME_LIMIT setting).`,
      },
    ),
    'daily_volume_limit_exceeded',
    rail,
  );
}

/** The catalog checkout reference a create names in its metadata, if any (the catalog checks the rest). */
export function checkoutReference(metadata: Record<string, unknown>): string | undefined {
  const ref = metadata.checkout_reference_id;
  if (ref === undefined) return undefined;
  if (typeof ref !== 'string' || ref === '')
    throw badRequest('metadata.checkout_reference_id must be a non-empty string', {
      field: 'metadata.checkout_reference_id',
      remediation: 'Set metadata.checkout_reference_id to the checkout_reference_id of a checkout intent, or leave it out.',
    });
  return ref;
}

/** A demo body: a testnet rail (USDC preferred), an amount (default 1 USDC or 100 × the minimum) and a duration. */
export function decideDemo(body: DemoBody, rails: Rail[]): CreateRequest {
  const network = body.network ?? 'testnet';
  if (network !== 'testnet')
    throw badRequest('demo sessions use testnet rails only; set network to testnet', {
      field: 'network',
      remediation: 'Set network to testnet, or leave it out.',
    });
  const candidates = rails.filter(
    (r) => r.network === 'testnet' && (!body.chain || r.chain === body.chain) && (!body.token || r.token === body.token),
  );
  const rail = candidates.find((r) => r.token === 'USDC') ?? candidates[0];
  if (!rail)
    throw badRequest(`no testnet rail matches ${body.chain ?? '*'}:testnet:${body.token ?? '*'}; choose one from GET /v1/payment_methods`, {
      field: body.chain !== undefined ? 'chain' : 'token',
      remediation: REMEDIATION.rails,
    });
  const expected =
    body.amount === undefined
      ? rail.token === 'USDC'
        ? toSubunits(1, rail.decimals)
        : toSubunits(rail.min_amount, rail.decimals) * 100n
      : parseAmount(body.amount, rail);
  if (expected > toSubunits(DEMO_AMOUNT_MAX, rail.decimals))
    throw badRequest(`demo sessions take at most ${DEMO_AMOUNT_MAX} ${rail.token}`, {
      field: 'amount',
      remediation: `Send amount of at most ${DEMO_AMOUNT_MAX} ${rail.token}, or leave it out.`,
    });
  const expiresMs = parseExpiresIn(body.expires_in ?? DEMO_DEFAULT_EXPIRES_IN, DEMO_EXPIRES_IN_MAX_MS, '1h');
  return { rail, expected, expiresMs, metadata: {} };
}

/** The environment label of a caller's sessions. */
export const environmentOf = (sandbox: boolean): Environment => (sandbox ? 'sandbox' : 'live');
