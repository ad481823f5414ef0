/** The merchant rail policy (lib/merchants/rail-policy.ts) and its change in the merchant actor, without a broker. */
import fc from 'fast-check';
import { buildRails, railKey } from '../../config/rails.ts';
import { knownRails } from '../../lib/catalog/rules.ts';
import { allowedKeys, checkRailPolicy, effectiveRails, parseRailPolicy, presentRailPolicy } from '../../lib/merchants/rail-policy.ts';
import { decideMerchant, type MerchantState } from '../../lib/merchants/merchant.ts';

const known = knownRails();
const testnetOnly = buildRails({
  ethereum: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: '' } },
  solana: { testnet: { rpcUrl: 'x' }, mainnet: { rpcUrl: '' } },
});
const rail = (key: string) => known.find((r) => railKey(r) === key)!;
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return { message: (e as Error).message, status: (e as { code: number }).code, data: (e as { data: unknown }).data };
  }
  return null;
};

describe('merchant rail policy', () => {
  it('keeps known rails in the rail list’s order and refuses an unknown one, naming it', () => {
    expect(parseRailPolicy(['solana:testnet:USDC', 'ethereum:mainnet:USDC', 'ethereum:testnet:USDC'], known)).toEqual([
      'ethereum:testnet:USDC',
      'solana:testnet:USDC',
      'ethereum:mainnet:USDC',
    ]);
    const r = refusal(() => parseRailPolicy(['ethereum:testnet:USDC', 'bitcoin:mainnet:BTC'], known));
    expect(r).toMatchObject({ status: 400, data: { field: 'allowed_rails[1]' } });
    expect(r!.message).toMatch(/^allowed_rails\[1\] 'bitcoin:mainnet:BTC' is not a rail/);
    // the triple must match exactly: a token alone or another case is not a rail
    expect(refusal(() => parseRailPolicy(['USDC'], known))).toMatchObject({ data: { field: 'allowed_rails[0]' } });
    expect(refusal(() => parseRailPolicy(['ethereum:testnet:usdc'], known))).toMatchObject({ data: { field: 'allowed_rails[0]' } });
  });

  it('refuses a rail outside the policy with a 400 on paymentMethod naming it; no policy allows every rail', () => {
    const policy = { allowed_rails: ['ethereum:testnet:USDC'] };
    const r = refusal(() => checkRailPolicy(policy, rail('ethereum:testnet:ETH')));
    expect(r).toMatchObject({ status: 400, data: { field: 'paymentMethod' } });
    expect(r!.message).toBe("ethereum:testnet:ETH is not allowed by the merchant's rail policy (allowed_rails: ethereum:testnet:USDC)");
    expect(refusal(() => checkRailPolicy(policy, rail('ethereum:testnet:USDC')))).toBeNull();
    expect(refusal(() => checkRailPolicy(null, rail('solana:testnet:SOL')))).toBeNull();
    expect(refusal(() => checkRailPolicy(undefined, rail('solana:testnet:SOL')))).toBeNull();
  });

  it('property: a rail passes exactly when the policy names it (or there is none); effective rails are enabled ∩ environment ∩ policy', () => {
    const keys = known.map(railKey);
    fc.assert(
      fc.property(fc.option(fc.subarray(keys, { minLength: 1 })), fc.constantFrom(...keys), fc.boolean(), (allowed, key, sandbox) => {
        const policy = allowed ? { allowed_rails: parseRailPolicy(allowed, known) } : null;
        const passes = refusal(() => checkRailPolicy(policy, rail(key))) === null;
        expect(passes).toBe(!allowed || allowed.includes(key));
        const effective = effectiveRails(policy, known, sandbox);
        for (const r of known) {
          const k = railKey(r);
          expect(effective.includes(k)).toBe((r.network === 'testnet') === sandbox && (!allowed || allowed.includes(k)));
        }
        expect(allowedKeys(policy, keys)).toEqual(policy ? policy.allowed_rails : keys);
      }),
    );
  });

  it('presents the stored policy and what the merchant can be paid on now', () => {
    expect(presentRailPolicy({ sandbox: true }, testnetOnly)).toEqual({
      allowed_rails: null,
      effective_rails: ['ethereum:testnet:USDC', 'ethereum:testnet:ETH', 'solana:testnet:USDC', 'solana:testnet:SOL'],
      updated_at: null,
    });
    // a mainnet rail in the policy of a sandbox merchant is stored, never effective
    const m = { sandbox: true, rail_policy: { allowed_rails: ['solana:testnet:SOL', 'ethereum:mainnet:USDC'], updated_at: 't' } };
    expect(presentRailPolicy(m, testnetOnly)).toEqual({
      allowed_rails: ['solana:testnet:SOL', 'ethereum:mainnet:USDC'],
      effective_rails: ['solana:testnet:SOL'],
      updated_at: 't',
    });
  });

  it('the merchant actor stores the policy and writes its audit row, with the one it replaced, in the same decision', () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const m = { id: 'mer_1', version: 3, sandbox: true, kyc_status: 'none', webhook_secrets: [] } as unknown as MerchantState;
    const set = decideMerchant(m, { type: 'set_rail_policy', allowed_rails: ['ethereum:testnet:USDC'] }, now);
    expect(set.state!.rail_policy).toEqual({ allowed_rails: ['ethereum:testnet:USDC'], updated_at: now.toISOString() });
    expect(set.effects).toEqual([
      {
        op: 'insert',
        coll: 'audit_events',
        doc: expect.objectContaining({
          type: 'merchant.rail_policy.set',
          merchant_id: 'mer_1',
          allowed_rails: ['ethereum:testnet:USDC'],
          previous_allowed_rails: null,
        }),
      },
    ]);
    const cleared = decideMerchant(set.state!, { type: 'set_rail_policy', allowed_rails: null }, now);
    expect(cleared.state!.rail_policy).toBeNull();
    expect(cleared.effects![0]).toMatchObject({ doc: { allowed_rails: null, previous_allowed_rails: ['ethereum:testnet:USDC'] } });
  });
});
