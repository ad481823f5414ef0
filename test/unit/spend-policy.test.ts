/** Spend policy rules: every rule and its reason, the fixed order, window caps over pending + posted spends. */
import fc from 'fast-check';
import {
  evaluate,
  parsePolicy,
  PolicyError,
  RULE_ORDER,
  REASONS,
  windowUsage,
  longestWindowMs,
  presentPolicyBody,
  type AttemptFacts,
  type PolicyInput,
  type CountedSpend,
} from '../../lib/spend/policy.ts';

const RAIL = 'ethereum:testnet:USDC';
const NOW = new Date('2026-01-10T12:00:00.000Z');
const BASE_POLICY: PolicyInput = {
  limits: {
    [RAIL]: {
      per_attempt_subunits: '5000000',
      approval_above_subunits: '3000000',
      windows: [{ duration: '24h', max_subunits: '10000000', max_count: 5 }],
    },
  },
  allowed_targets: [],
  denied_targets: [],
  allowed_api_domains: [],
  allow_mainnet: false,
  expires_at: null,
};

function facts(
  over: Partial<AttemptFacts> = {},
  attempt: Partial<AttemptFacts['attempt']> = {},
  policy: PolicyInput | null = BASE_POLICY,
): AttemptFacts {
  return {
    caller_merchant_id: 'mer_1',
    merchant: { sandbox: true, kyc_verified: false },
    wallet: { merchant_id: 'mer_1', type: 'agent', chain: 'ethereum', network: 'testnet' },
    rail_enabled: true,
    attempt: {
      chain: 'ethereum',
      network: 'testnet',
      token: 'USDC',
      target: '0x00000000000000000000000000000000000000aa',
      amount: 1_000_000n,
      ...attempt,
    },
    policy: policy ? parsePolicy(policy) : null,
    spends: [],
    now: NOW,
    ...over,
  };
}

describe('spend policy: each rule and its reason', () => {
  it('passes everything: pending with a full trace', () => {
    const e = evaluate(facts());
    expect(e.status).toBe('pending');
    expect(e.reason).toBeUndefined();
    expect(e.trace.map((t) => t.rule)).toEqual(RULE_ORDER);
    expect(e.windows).toEqual([
      {
        rail: RAIL,
        duration: '24h',
        used_subunits: '0',
        used_count: 0,
        max_subunits: '10000000',
        max_count: 5,
        remaining_subunits: '10000000',
        remaining_count: 5,
      },
    ]);
  });

  const cases: Array<[string, AttemptFacts, string, string]> = [
    ['ownership', facts({ caller_merchant_id: 'mer_2' }), 'denied', 'wallet_not_owned'],
    [
      'wallet type',
      facts({ wallet: { merchant_id: 'mer_1', type: 'merchant', chain: 'ethereum', network: 'testnet' } }),
      'denied',
      'not_agent_wallet',
    ],
    [
      'sandbox on mainnet',
      facts({ wallet: { merchant_id: 'mer_1', type: 'agent', chain: 'ethereum', network: 'mainnet' } }, { network: 'mainnet' }),
      'denied',
      'sandbox_mainnet_not_allowed',
    ],
    ['live merchant on testnet', facts({ merchant: { sandbox: false, kyc_verified: true } }), 'denied', 'live_testnet_not_allowed'],
    ['KYC', facts({ merchant: { sandbox: false, kyc_verified: false } }, { network: 'mainnet' }), 'denied', 'kyc_required'],
    ['rail enabled', facts({ rail_enabled: false }), 'denied', 'rail_not_enabled'],
    ["rail on the wallet's chain", facts({}, { chain: 'solana', token: 'USDC' }), 'denied', 'wallet_rail_mismatch'],
    ['policy present', facts({}, {}, null), 'denied', 'no_policy'],
    ['policy unexpired', facts({}, {}, { ...BASE_POLICY, expires_at: '2026-01-10T11:59:59.000Z' }), 'denied', 'policy_expired'],
    [
      'policy allows mainnet',
      facts(
        {
          merchant: { sandbox: false, kyc_verified: true },
          wallet: { merchant_id: 'mer_1', type: 'agent', chain: 'ethereum', network: 'mainnet' },
        },
        { network: 'mainnet' },
      ),
      'denied',
      'policy_mainnet_not_allowed',
    ],
    ['rail in the policy', facts({}, { token: 'ETH' }), 'denied', 'rail_not_in_policy'],
    [
      'denylist',
      facts({}, {}, { ...BASE_POLICY, denied_targets: ['0x00000000000000000000000000000000000000AA'] }),
      'denied',
      'target_denied',
    ],
    [
      'allowlist of targets',
      facts({}, {}, { ...BASE_POLICY, allowed_targets: ['0x00000000000000000000000000000000000000bb'] }),
      'denied',
      'target_not_allowed',
    ],
    [
      'allowlist of API domains',
      facts({}, { api_domain: 'evil.example' }, { ...BASE_POLICY, allowed_api_domains: ['api.example.com'] }),
      'denied',
      'api_domain_not_allowed',
    ],
    ['per-attempt cap', facts({}, { amount: 5_000_001n }), 'denied', 'per_attempt_cap_exceeded'],
    [
      'window amount',
      facts({ spends: [{ rail: RAIL, amount: 9_500_000n, at: Date.parse('2026-01-10T00:00:00.000Z') }] }),
      'denied',
      'window_amount_exceeded',
    ],
    [
      'window count',
      facts({ spends: Array.from({ length: 5 }, () => ({ rail: RAIL, amount: 1n, at: Date.parse('2026-01-10T00:00:00.000Z') })) }),
      'denied',
      'window_count_exceeded',
    ],
    ['approval threshold', facts({}, { amount: 3_000_001n }), 'approval_required', 'approval_threshold'],
  ];
  it.each(cases)('%s', (_name, f, status, reason) => {
    const e = evaluate(f);
    expect([e.status, e.reason]).toEqual([status, reason]);
    const last = e.trace[e.trace.length - 1];
    expect(last).toEqual({ rule: RULE_ORDER[e.trace.length - 1], passed: false, reason });
    expect(e.trace.slice(0, -1).every((t) => t.passed)).toBe(true);
  });

  it('covers every reason code', () => {
    const covered = new Set(cases.map((c) => c[3]));
    expect([...Object.values(REASONS).flat()].filter((r) => !covered.has(r))).toEqual([]);
  });

  it('API domains match case-insensitively; a missing api_domain fails a domain allowlist', () => {
    const p = { ...BASE_POLICY, allowed_api_domains: ['API.example.com'] };
    expect(evaluate(facts({}, { api_domain: 'api.EXAMPLE.com' }, p)).status).toBe('pending');
    expect(evaluate(facts({}, {}, p)).reason).toBe('api_domain_not_allowed');
  });

  it('Solana targets compare case-sensitively, Ethereum ones not', () => {
    const sol = facts(
      { wallet: { merchant_id: 'mer_1', type: 'agent', chain: 'solana', network: 'testnet' } },
      { chain: 'solana', target: 'AbC' },
      { ...BASE_POLICY, limits: { 'solana:testnet:USDC': {} }, denied_targets: ['abc'] },
    );
    expect(evaluate(sol).status).toBe('pending');
  });

  it('spends outside the window or on another rail do not count; approval re-evaluation skips the threshold', () => {
    const spends: CountedSpend[] = [
      { rail: RAIL, amount: 9_000_000n, at: Date.parse('2026-01-09T11:59:59.000Z') },
      { rail: 'solana:testnet:USDC', amount: 9_000_000n, at: Date.parse('2026-01-10T11:00:00.000Z') },
    ];
    expect(evaluate(facts({ spends })).status).toBe('pending');
    expect(evaluate(facts({ approving: true }, { amount: 4_000_000n })).status).toBe('pending');
  });
});

describe('spend policy: evaluation order', () => {
  it('the first failing rule decides, whatever else fails after it', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: RULE_ORDER.length, maxLength: RULE_ORDER.length }), (fail) => {
        // build facts in which exactly the chosen rules fail (independently of each other)
        const [own, type, sandbox, kyc, rail, pol, deny, allow, per, win, appr] = fail;
        const mainnet = sandbox || kyc;
        const f = facts(
          {
            caller_merchant_id: own ? 'mer_x' : 'mer_1',
            // rule 3 passes when the merchant is on its own network: sandbox on testnet, live on mainnet
            merchant: { sandbox: sandbox || !mainnet, kyc_verified: !kyc },
            wallet: {
              merchant_id: 'mer_1',
              type: type ? 'merchant' : 'agent',
              chain: 'ethereum',
              network: mainnet ? 'mainnet' : 'testnet',
            },
            rail_enabled: !rail,
            spends: win
              ? [{ rail: mainnet ? 'ethereum:mainnet:USDC' : RAIL, amount: 9_999_999n, at: Date.parse('2026-01-10T11:00:00.000Z') }]
              : [],
          },
          { network: mainnet ? 'mainnet' : 'testnet', amount: per ? 6_000_000n : appr ? 3_500_000n : 1_000_000n },
          {
            ...BASE_POLICY,
            limits: { [mainnet ? 'ethereum:mainnet:USDC' : RAIL]: BASE_POLICY.limits[RAIL] },
            allow_mainnet: true,
            expires_at: pol ? '2020-01-01T00:00:00.000Z' : null,
            denied_targets: deny ? ['0x00000000000000000000000000000000000000aa'] : [],
            allowed_targets: allow ? ['0x00000000000000000000000000000000000000bb'] : [],
          },
        );
        const e = evaluate(f);
        const first = fail.findIndex((x) => x);
        if (first === -1) return e.status === 'pending';
        return e.trace.length === first + 1 && (REASONS[RULE_ORDER[first]] as readonly string[]).includes(e.reason!);
      }),
      { numRuns: 500 },
    );
  });
});

describe('window caps (property)', () => {
  it('accepting attempts one by one never lets pending + posted exceed a window cap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ amount: fc.bigInt({ min: 1n, max: 4_000_000n }), offsetMin: fc.integer({ min: 0, max: 60 * 48 }) }), {
          maxLength: 60,
        }),
        (attempts) => {
          const spends: CountedSpend[] = [];
          const sorted = [...attempts].sort((a, b) => b.offsetMin - a.offsetMin);
          for (const a of sorted) {
            const now = new Date(NOW.getTime() - a.offsetMin * 60_000);
            const e = evaluate(
              facts(
                { spends, now },
                { amount: a.amount },
                { ...BASE_POLICY, limits: { [RAIL]: { windows: [{ duration: '24h', max_subunits: '10000000', max_count: 5 }] } } },
              ),
            );
            if (e.status === 'pending') spends.push({ rail: RAIL, amount: a.amount, at: now.getTime() });
            const [w] = windowUsage(parsePolicy(BASE_POLICY).limits.get(RAIL), RAIL, spends, now);
            if (BigInt(w.used_subunits) > 10_000_000n || w.used_count > 5) return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('policy body', () => {
  it('refuses bad rails, durations, amounts and windows without caps', () => {
    const bad: PolicyInput[] = [
      { limits: { USDC: {} } },
      { limits: { [RAIL]: { windows: [{ duration: '24x', max_count: 1 }] } } },
      { limits: { [RAIL]: { windows: [{ duration: '10s', max_count: 1 }] } } },
      { limits: { [RAIL]: { windows: [{ duration: '31d', max_count: 1 }] } } },
      { limits: { [RAIL]: { windows: [{ duration: '1h' }] } } },
      {
        limits: {
          [RAIL]: {
            windows: [
              { duration: '1h', max_count: 1 },
              { duration: '1h', max_count: 2 },
            ],
          },
        },
      },
      { limits: { [RAIL]: { per_attempt_subunits: '1.5' } } },
      { limits: { [RAIL]: { per_attempt_subunits: '007' } } },
      { limits: {}, expires_at: 'tomorrow' },
    ];
    for (const b of bad) expect(() => parsePolicy(b)).toThrow(PolicyError);
  });

  it('round-trips through its presentation; the longest window is known', () => {
    const p = parsePolicy({
      ...BASE_POLICY,
      limits: { ...BASE_POLICY.limits, 'solana:testnet:USDC': { windows: [{ duration: '7d', max_count: 3 }] } },
    });
    expect(parsePolicy(presentPolicyBody(p))).toEqual(p);
    expect(longestWindowMs(p)).toBe(7 * 86_400_000);
    expect(longestWindowMs(null)).toBe(0);
  });
});

describe('aggregated spends', () => {
  it('an aggregate of several spends counts its amount and count while its latest spend is in the window', () => {
    const spends: CountedSpend[] = [{ rail: RAIL, amount: 9_000_000n, at: Date.parse('2026-01-09T12:00:30.000Z'), count: 4 }];
    const [w] = windowUsage(parsePolicy(BASE_POLICY).limits.get(RAIL), RAIL, spends, NOW);
    expect([w.used_subunits, w.used_count]).toEqual(['9000000', 4]);
    expect(evaluate(facts({ spends }, { amount: 1_500_000n })).reason).toBe('window_amount_exceeded');
    expect(evaluate(facts({ spends, now: new Date('2026-01-10T12:00:31.000Z') }, { amount: 1_500_000n })).status).toBe('pending');
  });
});
