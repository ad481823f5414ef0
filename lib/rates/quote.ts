/**
 * Prices in fiat: a price such as 25.00 USD becomes an amount of the rail's token at a fresh spot rate,
 * rounded UP to the token's smallest unit, so the merchant never receives less than the price is worth
 * at that rate and the buyer pays at most one smallest unit more. Exact decimal arithmetic on BigInt
 * throughout (a rate is a decimal string; no floating point touches money). The amount is computed once,
 * when the session is created, and locked with its quote for the session's life.
 *
 *   subunits = ceil(price × 10^decimals / rate)
 */
import { decimalText } from '../core/money.ts';
import { unavailable, type ServiceError } from '../core/errors.ts';
import { RateUnavailableError, type RatesEngine, type RateView } from './engine.ts';

/** The fiat currencies a price may be given in, with their ISO 4217 minor units. */
export const FIAT_CURRENCIES: Readonly<Record<string, number>> = { USD: 2, EUR: 2, GBP: 2, CHF: 2, JPY: 0 };

/** The largest fiat price taken (in whole currency units): far above any real payment. */
export const MAX_FIAT_UNITS = 10n ** 12n;

export const isFiatCurrency = (c: string): boolean => Object.hasOwn(FIAT_CURRENCIES, c);

/** A fiat amount in its currency's minor units (cents): 25.00 USD is {currency: USD, minor: 2500n, digits: 2}. */
export interface FiatAmount {
  currency: string;
  minor: bigint;
  /** the currency's minor-unit digits */
  digits: number;
}

/** Why a fiat price cannot be used; the caller turns it into a 400 naming the field. */
export class FiatPriceError extends Error {
  readonly field: 'amount' | 'currency';
  constructor(field: 'amount' | 'currency', message: string) {
    super(message);
    this.field = field;
  }
}

/** A decimal string as an integer and its scale: "25.10" → [2510n, 2]. */
function scaled(decimal: string): [bigint, number] {
  const [whole, frac = ''] = decimal.split('.');
  return [BigInt(whole + frac), frac.length];
}

/** Parses a price `{amount: "25.00", currency: "USD"}`: a positive decimal string with at most the currency's minor digits. */
export function parseFiatAmount(amount: string, currency: string): FiatAmount {
  const digits = FIAT_CURRENCIES[currency];
  if (digits === undefined) {
    throw new FiatPriceError('currency', `currency '${currency}' is not supported; use one of ${Object.keys(FIAT_CURRENCIES).join(', ')}`);
  }
  if (!/^\d{1,20}(\.\d{1,20})?$/.test(amount)) {
    throw new FiatPriceError('amount', `price.amount must be a decimal string such as "25.00", got ${JSON.stringify(amount.slice(0, 40))}`);
  }
  const text = decimalText(amount);
  const [int, scale] = scaled(text);
  if (scale > digits) {
    throw new FiatPriceError(
      'amount',
      `price.amount has more decimal places than ${currency} has (${digits}); round it to ${digits} decimal${digits === 1 ? '' : 's'}`,
    );
  }
  const minor = int * 10n ** BigInt(digits - scale);
  if (minor <= 0n) throw new FiatPriceError('amount', 'price.amount must be greater than 0');
  if (minor > MAX_FIAT_UNITS * 10n ** BigInt(digits)) {
    throw new FiatPriceError('amount', `price.amount is larger than the maximum of ${MAX_FIAT_UNITS} ${currency}`);
  }
  return { currency, minor, digits };
}

/** A fiat amount as text with exactly its currency's minor digits ("25.00", "1500" for JPY). */
export function formatFiat(a: FiatAmount): string {
  if (a.digits === 0) return a.minor.toString();
  const s = a.minor.toString().padStart(a.digits + 1, '0');
  return `${s.slice(0, s.length - a.digits)}.${s.slice(s.length - a.digits)}`;
}

/**
 * The smallest number of the token's smallest units worth at least `price` at `rate` (1 token = rate
 * units of the price's currency): ceil(price × 10^decimals / rate), exactly.
 */
export function tokenSubunitsFor(price: FiatAmount, rate: string, decimals: number): bigint {
  const [r, rScale] = scaled(decimalText(rate));
  if (r <= 0n) throw new Error(`rate ${rate} is not positive`);
  // price = minor / 10^digits, rate = r / 10^rScale
  const numerator = price.minor * 10n ** BigInt(rScale + decimals);
  const denominator = r * 10n ** BigInt(price.digits);
  return (numerator + denominator - 1n) / denominator;
}

/** The locked quote a session carries (additive field `quote`). */
export interface SessionQuote {
  /** the price's currency, e.g. USD */
  currency: string;
  /** the price, a decimal string with the currency's minor digits: "25.00" */
  amount: string;
  /** 1 token = rate currency units, a decimal string */
  rate: string;
  /** the rate source: chainlink, http, static */
  source: string;
  /** when the source observed the rate */
  rate_as_of: string;
  /** when the amount was computed and locked */
  quoted_at: string;
}

/** Why no quote can be made now: no fresh rate (retryable) or no source at all for the pair (a setting). */
export class QuoteUnavailableError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

/**
 * The amount to ask for and its quote, from a rate the rates engine returned. A stale rate (older than
 * RATES_MAX_AGE by its source's own timestamp) is refused: a locked price must not rest on an old number.
 */
export function quoteFrom(price: FiatAmount, rate: RateView, decimals: number, now: Date): { subunits: bigint; quote: SessionQuote } {
  if (rate.stale) {
    throw new QuoteUnavailableError(
      `no fresh ${rate.base}/${rate.quote} rate: the newest (${rate.rate} from ${rate.source}) is from ${rate.as_of}, older than RATES_MAX_AGE; retry shortly`,
      true,
    );
  }
  return {
    subunits: tokenSubunitsFor(price, rate.rate, decimals),
    quote: {
      currency: price.currency,
      amount: formatFiat(price),
      rate: rate.rate,
      source: rate.source,
      rate_as_of: rate.as_of,
      quoted_at: now.toISOString(),
    },
  };
}

/**
 * A fresh quote of `price` for a token with `decimals` decimals, through the rates engine (shared cache,
 * ordered sources); without a fresh rate, the 503 of quoteUnavailable.
 */
export async function quotePrice(
  rates: Pick<RatesEngine, 'rate'>,
  price: FiatAmount,
  token: { token: string; decimals: number },
  now: Date,
): Promise<{ subunits: bigint; quote: SessionQuote }> {
  try {
    return quoteFrom(price, await rates.rate(token.token, price.currency), token.decimals, now);
  } catch (e) {
    const why = e instanceof RateUnavailableError ? new QuoteUnavailableError(e.message, e.retryable) : e;
    if (why instanceof QuoteUnavailableError) throw quoteUnavailable(why, token.token, price.currency);
    throw e;
  }
}

/** The 503 of a price that cannot be quoted now: retryable when a source lags, a setting otherwise. */
export function quoteUnavailable(e: QuoteUnavailableError, token: string, currency: string): ServiceError {
  return unavailable(`cannot price ${currency} in ${token}: ${e.message}`, {
    retryable: e.retryable,
    remediation: e.retryable
      ? 'Send the same request again shortly, or send an amount in tokens instead of a price in fiat.'
      : `Configure a rate source for ${token}:${currency} (RATE_SOURCES, RATES_STATIC, RATES_HTTP_URL or RATES_CHAINLINK_FEEDS), or send an amount in tokens instead of a price in fiat.`,
  });
}
