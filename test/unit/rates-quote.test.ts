/**
 * Prices in fiat (lib/rates/quote.ts): parsing, the exact conversion to token units rounded up, and the
 * quote. Property: for any price, rate and token decimals, the amount asked for is worth at least the price
 * at the rate, and one smallest unit less would be worth less (never under, at most one unit over).
 */
import fc from 'fast-check';
import {
  FiatPriceError,
  QuoteUnavailableError,
  formatFiat,
  parseFiatAmount,
  quoteFrom,
  quotePrice,
  tokenSubunitsFor,
  type FiatAmount,
} from '../../lib/rates/quote.ts';
import { RateUnavailableError, type RateView } from '../../lib/rates/engine.ts';

const usd = (amount: string) => parseFiatAmount(amount, 'USD');
const view = (rate: string, stale = false): RateView => ({
  base: 'ETH',
  quote: 'USD',
  rate,
  source: 'static',
  as_of: '2030-01-01T00:00:00.000Z',
  stale,
});

/**
 * value × 10^k as an integer, for a decimal string and enough k: an independent way of comparing
 * token value and price (string arithmetic, not the module's scaling).
 */
function atScale(decimal: string, k: number): bigint {
  const [whole, frac = ''] = decimal.split('.');
  if (frac.length > k) throw new Error('scale too small');
  return BigInt(whole + frac.padEnd(k, '0'));
}

describe('fiat prices', () => {
  it('asks for exactly 0.01 ETH for 25.00 USD at 2,500 USD/ETH', () => {
    expect(tokenSubunitsFor(usd('25.00'), '2500', 18)).toBe(10n ** 16n);
    expect(tokenSubunitsFor(usd('25'), '2500.000', 18)).toBe(10n ** 16n);
  });

  it('rounds up to the smallest unit, and is exact when the division is', () => {
    expect(tokenSubunitsFor(usd('10.00'), '3', 6)).toBe(3_333_334n); // 3.333333… USDC → 3.333334
    expect(tokenSubunitsFor(usd('25.00'), '1', 6)).toBe(25_000_000n);
    expect(tokenSubunitsFor(usd('25.00'), '0.99991', 6)).toBe(25_002_251n); // 25002250.20…
    expect(tokenSubunitsFor(usd('0.01'), '3456.78912345', 18)).toBe(2_892_857_979_726n); // 2892857979725.31…
    expect(tokenSubunitsFor(usd('1.00'), '150.25', 9)).toBe(6_655_575n); // 6655574.04… lamports
    expect(tokenSubunitsFor(parseFiatAmount('1500', 'JPY'), '450000', 18)).toBe(3_333_333_333_333_334n);
  });

  it('parses prices: a positive decimal string with at most the currency’s minor digits', () => {
    expect(usd('25.00')).toEqual({ currency: 'USD', minor: 2500n, digits: 2 });
    expect(usd('0025.5')).toEqual({ currency: 'USD', minor: 2550n, digits: 2 });
    expect(parseFiatAmount('1500', 'JPY')).toEqual({ currency: 'JPY', minor: 1500n, digits: 0 });
    expect(formatFiat(usd('25'))).toBe('25.00');
    expect(formatFiat(usd('0.5'))).toBe('0.50');
    expect(formatFiat(parseFiatAmount('1500', 'JPY'))).toBe('1500');
    const refused = (amount: string, currency = 'USD') => {
      try {
        parseFiatAmount(amount, currency);
      } catch (e) {
        expect(e).toBeInstanceOf(FiatPriceError);
        return `${(e as FiatPriceError).field}: ${(e as Error).message}`;
      }
      throw new Error(`${amount} ${currency} was accepted`);
    };
    expect(refused('25.001')).toMatch(/^amount: .*more decimal places than USD has \(2\)/);
    expect(refused('1.5', 'JPY')).toMatch(/^amount: .*JPY has \(0\)/);
    expect(refused('0.00')).toMatch(/^amount: .*greater than 0/);
    for (const bad of ['', '-1', '1e3', '1,5', ' 1', '1.', '.5', 'NaN']) expect(refused(bad)).toMatch(/^amount: .*decimal string/);
    expect(refused('1000000000000.01')).toMatch(/^amount: .*maximum/);
    expect(refused('1', 'XXX')).toMatch(/^currency: .*USD, EUR/);
    expect(refused('1', 'usd')).toMatch(/^currency: /);
  });

  it('property: never under the price, at most one smallest unit over', () => {
    const rate = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 9n }), fc.bigInt({ min: 0n, max: 10n ** 18n - 1n }), fc.integer({ min: 0, max: 18 }))
      .map(([whole, frac, scale]) => {
        const f = (frac % 10n ** BigInt(scale)).toString().padStart(scale, '0');
        return scale ? `${whole}.${f}` : whole.toString();
      })
      .filter((r) => /[1-9]/.test(r));
    const price = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 14n }), fc.constantFrom('USD', 'EUR', 'JPY'))
      .map(([minor, currency]): FiatAmount => ({ currency, minor, digits: currency === 'JPY' ? 0 : 2 }));
    fc.assert(
      fc.property(price, rate, fc.constantFrom(6, 9, 18), (p, r, decimals) => {
        const units = tokenSubunitsFor(p, r, decimals);
        // compare value(units) = units × rate / 10^decimals with the price, both × 10^K as integers
        const K = 40;
        const value = (u: bigint) => u * atScale(r, K); // × 10^(K + decimals)
        const priceScaled = atScale(formatFiat(p), K) * 10n ** BigInt(decimals);
        expect(units).toBeGreaterThan(0n);
        expect(value(units) >= priceScaled).toBe(true);
        expect(value(units - 1n) < priceScaled).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: a higher price never asks for less', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), (a, b) => {
        const [lo, hi] = a < b ? [a, b] : [b, a];
        const at = (minor: bigint) => tokenSubunitsFor({ currency: 'USD', minor, digits: 2 }, '1234.5678', 18);
        expect(at(lo) <= at(hi)).toBe(true);
      }),
    );
  });

  it('locks a quote from a fresh rate and refuses a stale one (retryable)', () => {
    const now = new Date('2030-01-01T00:00:05.000Z');
    expect(quoteFrom(usd('25'), view('2500'), 18, now)).toEqual({
      subunits: 10n ** 16n,
      quote: {
        currency: 'USD',
        amount: '25.00',
        rate: '2500',
        source: 'static',
        rate_as_of: '2030-01-01T00:00:00.000Z',
        quoted_at: '2030-01-01T00:00:05.000Z',
      },
    });
    expect(() => quoteFrom(usd('25'), view('2500', true), 18, now)).toThrow(QuoteUnavailableError);
    try {
      quoteFrom(usd('25'), view('2500', true), 18, now);
    } catch (e) {
      expect((e as QuoteUnavailableError).retryable).toBe(true);
      expect((e as Error).message).toMatch(/no fresh ETH\/USD rate/);
    }
  });

  it('passes on why the rates engine has no rate as a 503: retryable when sources failed, not when none is configured', async () => {
    const now = new Date();
    const failing = { rate: async () => Promise.reject(new RateUnavailableError('ETH', 'USD', ['http: HTTP 500'])) };
    const unset = { rate: async () => Promise.reject(new RateUnavailableError('ETH', 'USD', [])) };
    const stale = { rate: async () => view('2500', true) };
    const eth = { token: 'ETH', decimals: 18 };
    await expect(quotePrice(failing, usd('1'), eth, now)).rejects.toMatchObject({ code: 503, data: { retryable: true } });
    await expect(quotePrice(stale, usd('1'), eth, now)).rejects.toMatchObject({ code: 503, data: { retryable: true } });
    await expect(quotePrice(unset, usd('1'), eth, now)).rejects.toMatchObject({
      code: 503,
      message: expect.stringMatching(/^cannot price USD in ETH: no rate for ETH\/USD/),
      data: { retryable: false, remediation: expect.stringMatching(/RATES_STATIC/) },
    });
    await expect(quotePrice({ rate: async () => view('2500') }, usd('25'), eth, now)).resolves.toMatchObject({ subunits: 10n ** 16n });
  });
});
