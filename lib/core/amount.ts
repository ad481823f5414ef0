/**
 * An amount from a request, in smallest units, checked against its rail: the one parsing rule for sessions
 * and payouts (a refusal is a 400 that says what to change). Kept apart from money.ts, which the worker
 * threads load, so that they do not load the broker's error classes.
 */
import { badRequest } from './errors.ts';
import { AmountError, checkAmountBound, fromSubunits, toSubunits } from './money.ts';

/** What parsing an amount needs of a rail (config/rails.ts `Rail`). */
export interface AmountRail {
  chain: string;
  network: string;
  token: string;
  decimals: number;
  min_amount: string;
}

/** The fiat price an amount was converted from (lib/rates/quote.ts `SessionQuote`), to explain a refusal. */
export interface QuotedPrice {
  amount: string;
  currency: string;
  rate: string;
}

/** The amount in smallest units, checked against the rail's decimals and min_amount. */
export function parseAmount(amount: number | string, rail: AmountRail, field = 'amount'): bigint {
  const units = tokenAmount(amount, rail, field);
  checkMinimum(units, rail, undefined, field);
  return units;
}

/** Refuses an amount below the rail's min_amount; `quoted` explains an amount converted from a price. */
export function checkMinimum(units: bigint, rail: AmountRail, quoted?: QuotedPrice, field = 'amount'): void {
  if (units < toSubunits(rail.min_amount, rail.decimals)) {
    const what = quoted
      ? `${quoted.amount} ${quoted.currency} is ${fromSubunits(units, rail.decimals)} ${rail.token} at ${quoted.rate} ${quoted.currency}/${rail.token}, which`
      : 'amount';
    throw badRequest(
      `${what} is below the minimum of ${rail.min_amount} ${rail.token} for ${rail.chain} ${rail.network}; ${quoted ? 'raise the price' : `send at least ${rail.min_amount}`}`,
      {
        field: quoted ? 'price.amount' : field,
        remediation: quoted
          ? `Raise price.amount to at least the value of ${rail.min_amount} ${rail.token}.`
          : `Send ${field} of at least ${rail.min_amount} ${rail.token} (min_amount in GET /v1/payment_methods).`,
      },
    );
  }
}

/** Token units (a number or decimal string) to smallest units: decimals, sign and the global bound. */
function tokenAmount(amount: number | string, rail: AmountRail, field: string): bigint {
  const at = (remediation: string) => ({ field, remediation });
  let units: bigint;
  try {
    units = toSubunits(amount, rail.decimals);
    checkAmountBound(units, rail.decimals);
  } catch (e) {
    if (e instanceof AmountError) {
      throw badRequest(
        /decimal places/.test(e.message)
          ? `amount has more decimal places than ${rail.token} on ${rail.chain} ${rail.network} allows (${rail.decimals}); round it to ${rail.decimals} decimals`
          : /maximum/.test(e.message)
            ? e.message
            : 'amount must be a positive decimal number',
        at(
          /decimal places/.test(e.message)
            ? `Round ${field} to ${rail.decimals} decimal places, or send amount_subunits in smallest units.`
            : `Send ${field} as a positive number of ${rail.token}.`,
        ),
      );
    }
    throw e;
  }
  if (units <= 0n) throw badRequest('amount must be greater than 0', at(`Send ${field} greater than 0.`));
  return units;
}
