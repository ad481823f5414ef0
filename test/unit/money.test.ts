import fc from 'fast-check';
import { decimalText, fromSubunits, toSubunits, toApiNumber } from '../../lib/core/money.ts';

describe('money', () => {
  it('converts token units to smallest units exactly', () => {
    expect(toSubunits(10.5, 6)).toBe(10_500_000n);
    expect(toSubunits(0.1, 18)).toBe(100_000_000_000_000_000n);
    expect(toSubunits('123456789.123456', 6)).toBe(123456789123456n);
    expect(toSubunits(1e-7, 9)).toBe(100n);
    expect(toSubunits(1e21, 6)).toBe(10n ** 27n);
    expect(toSubunits(0, 6)).toBe(0n);
  });

  it('refuses more decimals than the token has and non-numbers', () => {
    expect(() => toSubunits(0.0000001, 6)).toThrow(/more than 6 decimal places/);
    expect(() => toSubunits('1.2345678', 6)).toThrow();
    expect(() => toSubunits(Number.NaN, 6)).toThrow();
    expect(() => toSubunits(Infinity, 6)).toThrow();
    expect(() => toSubunits('1,5', 6)).toThrow();
  });

  it('expands exponents in decimal text', () => {
    expect(decimalText(1.5e-10)).toBe('0.00000000015');
    expect(decimalText(2.5e3)).toBe('2500');
    expect(decimalText('00012.5000')).toBe('12.5');
  });

  it('formats smallest units back without trailing zeros', () => {
    expect(fromSubunits(10_500_000n, 6)).toBe('10.5');
    expect(fromSubunits('1', 18)).toBe('0.000000000000000001');
    expect(fromSubunits(0n, 9)).toBe('0');
    expect(toApiNumber('2500000', 6)).toBe(2.5);
  });

  it('round-trips any amount of subunits (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (units, decimals) => {
        expect(toSubunits(fromSubunits(units, decimals), decimals)).toBe(units);
      }),
    );
  });

  it('reads every JSON number with at most `decimals` places exactly as its text says (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 6 }), (n, places) => {
        const text = (n / 10 ** places).toFixed(places);
        const value = Number(text);
        expect(fromSubunits(toSubunits(value, 6), 6)).toBe(decimalText(text));
      }),
    );
  });
});
