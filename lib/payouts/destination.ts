/**
 * Payout destinations: a valid address of the wallet's chain, or null with the reason. Ethereum: 0x and
 * 40 hex digits; mixed case must be the EIP-55 checksum (a typo in a checksummed address is caught);
 * the zero address is refused (money sent there is burnt). Solana: base58 of exactly 32 bytes.
 */
import { decodeBase58, getAddress, ZeroAddress } from 'ethers';

export type DestinationCheck = { ok: true; address: string } | { ok: false; reason: string };

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

export function checkDestination(chain: string, raw: string): DestinationCheck {
  const s = raw.trim();
  if (chain === 'ethereum') {
    if (!/^0x[0-9a-fA-F]{40}$/.test(s))
      return { ok: false, reason: 'destination must be an Ethereum address: 0x followed by 40 hex digits' };
    const hex = s.slice(2);
    const mixed = hex !== hex.toLowerCase() && hex !== hex.toUpperCase();
    const checksummed = getAddress(s.toLowerCase());
    if (mixed && checksummed !== s)
      return {
        ok: false,
        reason: 'destination has an invalid EIP-55 checksum (mixed case that is not the checksum): check the address for a typo',
      };
    if (checksummed === ZeroAddress) return { ok: false, reason: 'destination is the zero address: money sent there is lost' };
    return { ok: true, address: checksummed };
  }
  if (chain === 'solana') {
    if (s.length < 32 || s.length > 44 || !BASE58.test(s))
      return { ok: false, reason: 'destination must be a Solana address: base58 of a 32-byte public key' };
    const leadingZeros = /^1*/.exec(s)![0].length;
    const value = decodeBase58(s);
    const bytes = leadingZeros + (value === 0n ? 0 : Math.ceil(value.toString(16).length / 2));
    if (bytes !== 32) return { ok: false, reason: 'destination must be a Solana address: base58 of a 32-byte public key' };
    return { ok: true, address: s };
  }
  return { ok: false, reason: `payouts are not available on ${chain}` };
}
