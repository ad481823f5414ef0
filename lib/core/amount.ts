/**
 * An amount from a request, in smallest units, checked against its rail: the one parsing rule for sessions
 * and payouts (a refusal is a 400 that says what to change). Kept apart from money.ts, which the worker
 * threads load, so that they do not load the broker's error classes.
 */
import { badRequest } from './errors.ts';
import { AmountError, checkAmountBound, toSubunits } from './money.ts';

/** What parsing an amount needs of a rail (config/rails.ts `Rail`). */
export interface AmountRail {
  chain: string;
  network: string;
  token: string;
  decimals: number;
  min_amount: string;
}

/** The amount in smallest units, checked against the rail's decimals and min_amount. */
export function parseAmount(amount: number | string, rail: AmountRail): bigint {
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
      );
    }
    throw e;
  }
  if (units <= 0n) throw badRequest('amount must be greater than 0');
  if (units < toSubunits(rail.min_amount, rail.decimals)) {
    throw badRequest(
      `amount is below the minimum of ${rail.min_amount} ${rail.token} for ${rail.chain} ${rail.network}; send at least ${rail.min_amount}`,
    );
  }
  return units;
}
