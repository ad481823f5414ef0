/** The environment gate: each merchant on its own network only, mainnet only after KYC; every area words it alike. */
import fc from 'fast-check';
import { networkGate, networkForbidden, networkOf } from '../../lib/core/environment.ts';
import { evaluate, parsePolicy } from '../../lib/spend/policy.ts';

const standing = fc.record({
  sandbox: fc.boolean(),
  kyc_status: fc.constantFrom(undefined, null, 'none', 'pending', 'verified', 'rejected'),
});
const network = fc.constantFrom('testnet', 'mainnet');

describe('networkGate', () => {
  it('lets a merchant through exactly on its own network, and on mainnet only with verified KYC', () => {
    fc.assert(
      fc.property(standing, network, (m, net) => {
        const r = networkGate(m, net, 'payouts');
        const allowed = net === networkOf(m.sandbox) && (net === 'testnet' || m.kyc_status === 'verified');
        expect(r === null).toBe(allowed);
        if (r) {
          // asking for mainnet without the right is an abuse signal; a live merchant asking for testnet is not
          expect(r.abuse).toBe(net === 'mainnet');
          expect(r.reason).toBe(net !== networkOf(m.sandbox) ? (m.sandbox ? 'sandbox_mainnet' : 'live_testnet') : 'kyc_required');
        }
      }),
    );
  });

  it('names the refused thing in the KYC message and answers 403 on the field that chose the network', () => {
    const r = networkGate({ sandbox: false, kyc_status: 'pending' }, 'mainnet', 'payment sessions')!;
    expect(r.message).toMatch(/^mainnet payment sessions require KYC verification/);
    const e = networkForbidden(r, 'paymentMethod.network', { sandbox: 'use testnet', live: 'use mainnet' });
    expect(e.code).toBe(403);
    expect(e.data).toMatchObject({ field: 'paymentMethod.network', remediation: expect.stringMatching(/set-kyc/) });
    const live = networkForbidden(networkGate({ sandbox: false }, 'testnet', 'x')!, 'network', {
      sandbox: 'use testnet',
      live: 'use mainnet',
    });
    expect(live.data).toMatchObject({ field: 'network', remediation: 'use mainnet' });
  });

  it('is the agent spend rules 3 and 4: a live merchant off mainnet is denied too', () => {
    const policy = parsePolicy({ limits: { 'ethereum:testnet:USDC': {} }, allow_mainnet: true });
    const facts = (sandbox: boolean, net: string, kyc_verified: boolean) => ({
      caller_merchant_id: 'mer_1',
      merchant: { sandbox, kyc_verified },
      wallet: { id: 'wal_1', merchant_id: 'mer_1', type: 'agent', chain: 'ethereum', network: net, address: '0x' },
      rail_enabled: true,
      attempt: { chain: 'ethereum', network: net, token: 'USDC', target: '0xabc', amount: 1n },
      policy,
      spends: [],
      now: new Date('2026-01-10T12:00:00.000Z'),
      approving: false,
    });
    expect(evaluate(facts(false, 'testnet', true)).reason).toBe('live_testnet_not_allowed');
    expect(evaluate(facts(true, 'mainnet', true)).reason).toBe('sandbox_mainnet_not_allowed');
    expect(evaluate(facts(false, 'mainnet', false)).reason).toBe('kyc_required');
    expect(evaluate(facts(true, 'testnet', false)).status).toBe('pending');
  });
});
