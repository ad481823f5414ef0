/** Payout destinations: EIP-55 on Ethereum, 32-byte base58 on Solana; settlement ids back to deposit keys. */
import { checkDestination } from '../../lib/payouts/destination.ts';
import { depositKeyOf, settlementId, settlementKey } from '../../lib/ledger/index.ts';

describe('checkDestination', () => {
  it('accepts checksummed, lower- and upper-case Ethereum addresses and returns the checksum', () => {
    const sum = '0x52908400098527886E0F7030069857D2E4169EE7';
    for (const a of [sum, sum.toLowerCase(), `0x${sum.slice(2).toUpperCase()}`])
      expect(checkDestination('ethereum', a)).toEqual({ ok: true, address: sum });
  });

  it("refuses a wrong checksum, a bad length, the zero address and other chains' addresses on Ethereum", () => {
    for (const a of [
      '0x52908400098527886E0F7030069857D2E4169Ee7',
      '0x5290840009852788',
      '0x0000000000000000000000000000000000000000',
      'So11111111111111111111111111111111111111112',
    ]) {
      expect(checkDestination('ethereum', a).ok).toBe(false);
    }
  });

  it('accepts 32-byte base58 Solana keys only', () => {
    for (const a of [
      '11111111111111111111111111111111',
      'So11111111111111111111111111111111111111112',
      '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
    ]) {
      expect(checkDestination('solana', a)).toEqual({ ok: true, address: a });
    }
    for (const a of [
      '1111111111111111111111111111111',
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4Tzz',
      'O0Il1111111111111111111111111111',
    ]) {
      expect(checkDestination('solana', a).ok).toBe(false);
    }
    expect(checkDestination('bitcoin', 'x').ok).toBe(false);
  });

  it('maps settlement transfer ids of every generation back to the deposit key', () => {
    const key = 'ethereum:testnet:0xabc:3';
    expect(depositKeyOf(settlementId(settlementKey(key)))).toBe(key);
    expect(depositKeyOf(settlementId(settlementKey(key, 2)))).toBe(key);
    expect(settlementId(settlementKey(key, 2))).toBe(`set:${key}#2`);
  });
});
