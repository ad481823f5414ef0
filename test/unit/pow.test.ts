import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { leadingZeroBits, powBits, solvePow, verifyPow } from '../../lib/onboarding/pow.ts';

describe('proof of work (sha256-leading-zero-bits-v1)', () => {
  it('counts leading zero bits', () => {
    expect(leadingZeroBits(Uint8Array.from([0x80]))).toBe(0);
    expect(leadingZeroBits(Uint8Array.from([0x01]))).toBe(7);
    expect(leadingZeroBits(Uint8Array.from([0x00, 0x00, 0x10]))).toBe(19);
    expect(leadingZeroBits(new Uint8Array(4))).toBe(32);
  });

  it('hashes challenge + ":" + nonce', () => {
    const digest = createHash('sha256').update('abc:42').digest();
    expect(powBits('abc', '42')).toBe(leadingZeroBits(digest));
  });

  it('accepts a solved nonce and refuses empty, oversized or wrong ones (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 10 }), (challenge, difficulty) => {
        const nonce = solvePow(challenge, difficulty);
        expect(verifyPow(challenge, nonce, difficulty)).toBe(true);
        expect(powBits(challenge, nonce)).toBeGreaterThanOrEqual(difficulty);
      }),
      { numRuns: 50 },
    );
    expect(verifyPow('c', '', 0)).toBe(false);
    expect(verifyPow('c', 'x'.repeat(257), 0)).toBe(false);
    const c = 'challenge';
    let wrong = 'w0';
    for (let i = 1; powBits(c, wrong) >= 12; i++) wrong = `w${i}`;
    expect(verifyPow(c, wrong, 12)).toBe(false);
  });
});
