/**
 * Ethereum signatures through libsecp256k1 (lib/chains/ethereum/ecdsa.ts) give ethers' answers exactly:
 * the same signature bytes for any key and digest, the same recovered signer for any signature ethers' parse
 * lets through (a high s, the other parity, an arbitrary r), and a refusal wherever ethers refuses.
 */
import fc from 'fast-check';
import { Signature, SigningKey, computeAddress, hexlify, recoverAddress } from 'ethers';
import { recoverSigner, signDigest } from '../../lib/chains/ethereum/ecdsa.ts';

const N = BigInt('0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141');
const hex32 = (n: bigint) => `0x${n.toString(16).padStart(64, '0')}`;
/** a valid private key: 32 bytes in [1, n) */
const privateKey = fc.bigInt({ min: 1n, max: N - 1n }).map(hex32);
const digest = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => hexlify(b));

/** what ethers answers: the address, or 'refused' */
const outcome = (f: () => string): string => {
  try {
    return f();
  } catch {
    return 'refused';
  }
};

describe('Ethereum ECDSA through libsecp256k1', () => {
  it('signs byte for byte as ethers SigningKey.sign (RFC 6979, low s), and recovers the signer (property)', () => {
    fc.assert(
      fc.property(privateKey, digest, (key, d) => {
        const theirs = new SigningKey(key).sign(d);
        const ours = signDigest(Buffer.from(key.slice(2), 'hex'), d);
        expect(ours.serialized).toBe(theirs.serialized);
        expect(recoverSigner(d, ours)).toBe(computeAddress(key));
      }),
      { numRuns: 100 },
    );
  });

  it('recovers what ethers recovers from any signature it parses: a high s, the other parity, an arbitrary r (property)', () => {
    fc.assert(
      fc.property(
        privateKey,
        digest,
        fc.boolean(),
        fc.boolean(),
        fc.option(fc.bigInt({ min: 1n, max: 2n ** 256n - 1n }), { nil: undefined }),
        (key, d, flipS, flipParity, r) => {
          const good = new SigningKey(key).sign(d);
          const s = flipS ? hex32(N - BigInt(good.s)) : good.s;
          const yParity = (flipParity ? 1 - good.yParity : good.yParity) as 0 | 1;
          // what the parse refuses never reaches recovery (the proof is refused as a bad signature first)
          const parsed = outcome(() => Signature.from({ r: r === undefined ? good.r : hex32(r), s, yParity }).serialized);
          fc.pre(parsed !== 'refused');
          const sig = Signature.from(parsed);
          expect(outcome(() => recoverSigner(d, sig))).toBe(outcome(() => recoverAddress(d, sig)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a digest that is not 32 bytes', () => {
    const sig = new SigningKey(hex32(7n)).sign(hex32(1n));
    expect(() => recoverSigner('0x1234', sig)).toThrow();
    expect(() => signDigest(Buffer.alloc(32, 1), '0x1234')).toThrow();
  });
});
