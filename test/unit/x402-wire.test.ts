/** The x402 v2 wire's pure parts: an offer's requirements, their comparison, and the per-rail minimum. */
import fc from 'fast-check';
import { paymentRequired, requirementsOf, sameRequirements } from '../../lib/x402/wire.ts';
import { x402MinimumSubunits } from '../../lib/x402/costs.ts';
import { buildRails, findRail } from '../../config/rails.ts';

const NOW = new Date('2026-11-25T12:00:00Z');
const eth = { chain: 'ethereum' as const, network: 'eip155:31337', domain: { name: 'USD Coin', version: '2' } };
const sol = { chain: 'solana' as const, network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', feePayer: 'Gas111' };
const input = (expiresInMs: number) => ({
  challenge_id: 'xch_1',
  amount_subunits: '1000000',
  asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  pay_to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  expires_at: new Date(NOW.getTime() + expiresInMs).toISOString(),
});

describe('x402 v2 requirements', () => {
  it('maxTimeoutSeconds is what is left of the challenge, at least 1 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -86_400_000, max: 86_400_000 }), (ms) => {
        const r = requirementsOf(input(ms), eth, NOW);
        return r.maxTimeoutSeconds >= 1 && r.maxTimeoutSeconds <= Math.max(1, Math.floor(ms / 1000));
      }),
    );
  });

  it('Ethereum states the token domain, Solana the fee payer and memo; both the challenge id', () => {
    expect(requirementsOf(input(300_000), eth, NOW)).toEqual({
      scheme: 'exact',
      network: 'eip155:31337',
      amount: '1000000',
      asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', challengeId: 'xch_1' },
    });
    expect(requirementsOf(input(300_000), sol, NOW).extra).toEqual({ feePayer: 'Gas111', memo: 'xch_1', challengeId: 'xch_1' });
    expect(paymentRequired([requirementsOf(input(1), eth, NOW)], { url: '/r' }, 'why')).toMatchObject({
      x402Version: 2,
      error: 'why',
      resource: { url: '/r', description: '', mimeType: '' },
    });
  });

  it('a client’s accepted matches on scheme, network, amount, asset and payTo (hex case-insensitive on Ethereum only)', () => {
    const r = requirementsOf(input(300_000), eth, NOW);
    expect(sameRequirements({ ...r, asset: r.asset.toLowerCase(), payTo: r.payTo.toLowerCase(), extra: {} }, r)).toBe(true);
    for (const change of [{ amount: '1000001' }, { network: 'eip155:1' }, { scheme: 'upto' }, { payTo: '0x0' }])
      expect(sameRequirements({ ...r, ...change } as never, r)).toBe(false);
    const s = requirementsOf({ ...input(300_000), asset: 'MintAbc', pay_to: 'PayTo' }, sol, NOW);
    expect(sameRequirements({ ...s, asset: 'mintabc' }, s)).toBe(false);
  });
});

describe('x402 minimum per rail', () => {
  const rails = buildRails({
    ethereum: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: 'x' } },
    solana: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: 'x' } },
  });
  it('is the rail’s min_amount unless X402_MIN_AMOUNTS raises it, never lower', () => {
    const usdc = findRail(rails, 'ethereum', 'mainnet', 'USDC')!;
    expect(x402MinimumSubunits(usdc, {})).toBe(10_000n);
    expect(x402MinimumSubunits(usdc, { 'ethereum:mainnet:USDC': '1.5' })).toBe(1_500_000n);
    expect(x402MinimumSubunits(usdc, { 'ethereum:mainnet:USDC': '0.000001' })).toBe(10_000n);
    expect(x402MinimumSubunits(usdc, { 'solana:mainnet:USDC': '5' })).toBe(10_000n);
  });
});
