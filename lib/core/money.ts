/**
 * Money is integer smallest units inside (bigint, stored as digit strings). Conversion from the API's
 * JSON numbers goes through their shortest decimal text, never through floating-point arithmetic.
 */

export class AmountError extends Error {}

/** The exact decimal text of a JSON number or a decimal string (expands exponents like 1e-7). */
export function decimalText(value: number | string): string {
  let s = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(s);
  if (!m) throw new AmountError('amount must be a decimal number');
  const [, sign, int, frac = '', exp] = m;
  let digits = int + frac;
  let point = int.length + (exp ? Number(exp) : 0);
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits = digits + '0'.repeat(point - digits.length);
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(point).replace(/0+$/, '');
  s = `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
  return s === '-0' ? '0' : s;
}

/**
 * The largest amount the service takes, in token units (10^15: far above any real payment, and with
 * 18 decimals still far inside uint256, which every chain amount must fit).
 */
export const MAX_TOKEN_UNITS = 10n ** 15n;

/** Refuses an amount (smallest units) above MAX_TOKEN_UNITS token units. */
export function checkAmountBound(units: bigint, decimals: number): void {
  if (units > MAX_TOKEN_UNITS * 10n ** BigInt(decimals))
    throw new AmountError(`amount is larger than the maximum of ${MAX_TOKEN_UNITS} token units`);
}

/** Token units (number or decimal string) to smallest units; more decimals than the token has is an error. */
export function toSubunits(value: number | string, decimals: number): bigint {
  const text = decimalText(value);
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.replace('-', '').split('.');
  if (fraction.length > decimals) throw new AmountError(`amount has more than ${decimals} decimal places`);
  const units = BigInt(whole + fraction.padEnd(decimals, '0'));
  return negative ? -units : units;
}

/** Smallest units to a decimal string of token units, without trailing zeros. */
export function fromSubunits(units: bigint | string, decimals: number): string {
  let v = typeof units === 'bigint' ? units : BigInt(units);
  const negative = v < 0n;
  if (negative) v = -v;
  const s = v.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const fraction = decimals ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** For response fields the spec types as number: the nearest double of the exact decimal. */
export function toApiNumber(units: bigint | string, decimals: number): number {
  return Number(fromSubunits(units, decimals));
}

export const isDigits = (s: unknown): s is string => typeof s === 'string' && /^\d+$/.test(s);

/** Largest whole number of smallest units not above a decimal amount (a cap with more decimals than the token). */
export function floorSubunits(limit: string, decimals: number): bigint {
  const [whole, frac = ''] = decimalText(limit).split('.');
  return BigInt(whole + frac.slice(0, decimals).padEnd(decimals, '0'));
}
