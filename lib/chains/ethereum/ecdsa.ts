/**
 * secp256k1 signatures for Ethereum through libsecp256k1 (the `secp256k1` package's N-API build, prebuilt in
 * the package; where it cannot load, the package falls back to JavaScript itself). ethers does both in
 * JavaScript: recovering a signer cost ~2.8 ms of the event loop on every EIP-3009 redeem (0.13 ms here),
 * and signing a transaction ~0.54 ms of the signer worker (0.06 ms). Both give ethers' answers byte for
 * byte: RFC 6979 nonces with a low s, and recovery of any s below the group order (property-tested against
 * ethers in test/unit/ecdsa.test.ts).
 */
import { Signature } from 'ethers';
import secp256k1 from 'secp256k1';
import { ethereumAddressOf } from '../../addresses/addresses.ts';

const bytes32 = (hex: string): Buffer => {
  const b = Buffer.from(hex.startsWith('0x') ? hex.slice(2) : hex, 'hex');
  if (b.length !== 32) throw new Error('expected 32 bytes');
  return b;
};

/** The checksummed address whose key signed `digest` (32 bytes, hex); throws when no key could have. */
export function recoverSigner(digest: string, signature: Signature): string {
  const rs = Buffer.concat([bytes32(signature.r), bytes32(signature.s)]);
  return ethereumAddressOf(secp256k1.ecdsaRecover(rs, signature.yParity, bytes32(digest), false));
}

/** The signature of `digest` (32 bytes, hex) by `privateKey`: the one ethers' SigningKey.sign makes. */
export function signDigest(privateKey: Uint8Array, digest: string): Signature {
  const { signature, recid } = secp256k1.ecdsaSign(bytes32(digest), privateKey);
  const hex = Buffer.from(signature).toString('hex');
  return Signature.from({ r: `0x${hex.slice(0, 64)}`, s: `0x${hex.slice(64)}`, yParity: recid as 0 | 1 });
}
