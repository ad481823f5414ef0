/**
 * Agent spend policies: the policy body (parsed and checked, amounts as bigints), and the rule evaluation
 * of a spend attempt in one fixed, documented order. The first failing rule decides and names a stable
 * `reason`. Pure: no store, no broker, no clock of its own (the caller passes `now`).
 *
 * Order (README "Agent wallets"):
 *   1 ownership → 2 wallet type → 3 the merchant's own network → 4 KYC (3 and 4: lib/core/environment.ts)
 *   → 5 rail enabled (and the wallet's chain)
 *   → 6 policy present, unexpired, mainnet allowed by it, rail in its limits → 7 denylist → 8 allowlist
 *   (targets, API domains) → 9 per-attempt cap → 10 window caps (pending + posted spends) → 11 approval.
 */
import { parseDuration } from '../core/duration.ts';
import { networkGate } from '../core/environment.ts';
import type { Checked } from '../http/contract.ts';

/** Stable reason codes, in rule order. */
export const REASONS = {
  ownership: ['wallet_not_owned'],
  wallet_type: ['not_agent_wallet'],
  // the rule keeps its first name: a live merchant off mainnet fails it too (the environment gate)
  sandbox_mainnet: ['sandbox_mainnet_not_allowed', 'live_testnet_not_allowed'],
  kyc: ['kyc_required'],
  rail: ['rail_not_enabled', 'wallet_rail_mismatch'],
  policy: ['no_policy', 'policy_expired', 'policy_mainnet_not_allowed', 'rail_not_in_policy'],
  denylist: ['target_denied'],
  allowlist: ['target_not_allowed', 'api_domain_not_allowed'],
  per_attempt_cap: ['per_attempt_cap_exceeded'],
  window_caps: ['window_amount_exceeded', 'window_count_exceeded'],
  approval: ['approval_threshold'],
} as const;

export type RuleName = keyof typeof REASONS;
export type Reason = (typeof REASONS)[RuleName][number];
export const RULE_ORDER = Object.keys(REASONS) as RuleName[];

/** Reasons that are a limit violation (abuse_signal_total{signal="limit_violation"}). */
export const LIMIT_VIOLATIONS: ReadonlySet<Reason> = new Set<Reason>([
  'sandbox_mainnet_not_allowed',
  'kyc_required',
  'policy_mainnet_not_allowed',
  'per_attempt_cap_exceeded',
  'window_amount_exceeded',
  'window_count_exceeded',
]);

// ---- policy body --------------------------------------------------------------------------------------

/** The body of PUT /v1/agent-wallets/{id}/policy (the schema is closed; this is after ajv). */
export type PolicyInput = Checked<'AgentSpendPolicyRequest'>;
export type RailLimitsInput = PolicyInput['limits'][string];
export type WindowInput = NonNullable<RailLimitsInput['windows']>[number];

export interface SpendWindow {
  duration: string;
  ms: number;
  max_subunits: bigint | null;
  max_count: number | null;
}
export interface RailLimits {
  per_attempt: bigint | null;
  approval_above: bigint | null;
  windows: SpendWindow[];
}
export interface Policy {
  limits: Map<string, RailLimits>;
  allowed_targets: string[];
  denied_targets: string[];
  allowed_api_domains: string[];
  allow_mainnet: boolean;
  expires_at: string | null;
}

/** A policy body the rules refuse; `field` is the path of the input at fault. */
export class PolicyError extends Error {
  readonly field: string;
  constructor(message: string, field: string) {
    super(message);
    this.field = field;
  }
}

/** Shortest and longest window (the actor keeps spends for the longest one). */
export const WINDOW_MIN_MS = 60_000;
export const WINDOW_MAX_MS = 30 * 86_400_000;
const RAIL_KEY = /^[a-z0-9]+:(testnet|mainnet):[A-Za-z0-9]+$/;
const DIGITS = /^(0|[1-9]\d{0,77})$/;

function amount(value: string | undefined, where: string): bigint | null {
  if (value === undefined) return null;
  if (!DIGITS.test(value)) throw new PolicyError(`${where} must be a digit string of smallest units without leading zeros`, where);
  return BigInt(value);
}

/** Checks a policy body beyond its JSON schema (rail keys, durations, amounts) and types it. */
export function parsePolicy(input: PolicyInput): Policy {
  const limits = new Map<string, RailLimits>();
  for (const [rail, l] of Object.entries(input.limits)) {
    if (!RAIL_KEY.test(rail))
      throw new PolicyError(`limits key '${rail}' must be a rail <chain>:<network>:<token>, e.g. ethereum:testnet:USDC`, `limits.${rail}`);
    const windows: SpendWindow[] = [];
    const seen = new Set<string>();
    for (const [i, w] of (l.windows ?? []).entries()) {
      const where = `limits.${rail}.windows[${i}]`;
      const ms = parseDuration(w.duration);
      if (ms === null || ms < WINDOW_MIN_MS || ms > WINDOW_MAX_MS)
        throw new PolicyError(`${where}.duration must be a duration such as 1h, 24h or 7d, between 1m and 30d`, `${where}.duration`);
      if (w.max_subunits === undefined && w.max_count === undefined)
        throw new PolicyError(`${where} needs max_subunits, max_count or both`, where);
      if (w.max_count !== undefined && (!Number.isInteger(w.max_count) || w.max_count < 0))
        throw new PolicyError(`${where}.max_count must be a whole number`, `${where}.max_count`);
      if (seen.has(w.duration)) throw new PolicyError(`${where}.duration ${w.duration} appears twice`, `${where}.duration`);
      seen.add(w.duration);
      windows.push({
        duration: w.duration,
        ms,
        max_subunits: amount(w.max_subunits, `${where}.max_subunits`),
        max_count: w.max_count ?? null,
      });
    }
    limits.set(rail, {
      per_attempt: amount(l.per_attempt_subunits, `limits.${rail}.per_attempt_subunits`),
      approval_above: amount(l.approval_above_subunits, `limits.${rail}.approval_above_subunits`),
      windows,
    });
  }
  if (input.expires_at != null && Number.isNaN(Date.parse(input.expires_at)))
    throw new PolicyError('expires_at must be a timestamp or null', 'expires_at');
  return {
    limits,
    allowed_targets: input.allowed_targets ?? [],
    denied_targets: input.denied_targets ?? [],
    allowed_api_domains: (input.allowed_api_domains ?? []).map((d) => d.toLowerCase()),
    allow_mainnet: input.allow_mainnet ?? false,
    expires_at: input.expires_at == null ? null : new Date(input.expires_at).toISOString(),
  };
}

/** The longest window of any rail: spends older than this never count again. */
export function longestWindowMs(p: Policy | null): number {
  let max = 0;
  for (const l of p?.limits.values() ?? []) for (const w of l.windows) max = Math.max(max, w.ms);
  return max;
}

// ---- evaluation ---------------------------------------------------------------------------------------

/**
 * Spends that count against windows: pending or posted (voided and denied ones never do). One entry may
 * stand for several spends (`count`, default 1) made at or before `at` (ms): an aggregate counts as long
 * as its latest spend is inside a window, so aggregation can only make a cap stricter, never looser.
 */
export interface CountedSpend {
  rail: string;
  amount: bigint;
  at: number;
  count?: number;
}

/**
 * The spends that count, as sums instead of a list (an index of them: lib/agents/bucket-index.ts): the
 * amount and count of the rail's spends made in (from, to] (ms), exactly what a pass over the list gives.
 */
export interface SpendSums {
  sum(rail: string, from: number, to: number): { amount: bigint; count: number };
}

export interface AttemptFacts {
  caller_merchant_id: string;
  merchant: { sandbox: boolean; kyc_verified: boolean };
  wallet: { merchant_id: string; type: string; chain: string; network: string };
  /** whether (chain, network, token) is an enabled rail */
  rail_enabled: boolean;
  attempt: { chain: string; network: string; token: string; target: string; amount: bigint; api_domain?: string };
  policy: Policy | null;
  /** pending and posted spends of this wallet (any rail; filtered here), or their sums */
  spends: CountedSpend[] | SpendSums;
  now: Date;
  /** approval of an approval_required attempt re-checks everything but the approval threshold */
  approving?: boolean;
}

export interface WindowHeadroom {
  rail: string;
  duration: string;
  used_subunits: string;
  used_count: number;
  max_subunits: string | null;
  max_count: number | null;
  /** what may still be spent in the window before this attempt (null: no amount cap) */
  remaining_subunits: string | null;
  remaining_count: number | null;
}

export interface RuleResult {
  rule: RuleName;
  passed: boolean;
  reason?: Reason;
}

export interface Evaluation {
  status: 'pending' | 'approval_required' | 'denied';
  reason?: Reason;
  /** every rule in order up to the deciding one */
  trace: RuleResult[];
  windows: WindowHeadroom[];
}

/** Addresses compare by chain: Ethereum's are case-insensitive hex, Solana's base58 is case-sensitive. */
export function sameTarget(chain: string, a: string, b: string): boolean {
  return chain === 'ethereum' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** Used amount and count of each window of the rail, over pending and posted spends. */
export function windowUsage(limits: RailLimits | undefined, rail: string, spends: CountedSpend[] | SpendSums, now: Date): WindowHeadroom[] {
  if (!limits) return [];
  const t = now.getTime();
  return limits.windows.map((w) => {
    let used = 0n;
    let count = 0;
    if (!Array.isArray(spends)) ({ amount: used, count } = spends.sum(rail, t - w.ms, t));
    else
      for (const s of spends) {
        if (s.rail !== rail) continue;
        if (s.at > t - w.ms && s.at <= t) {
          used += s.amount;
          count += s.count ?? 1;
        }
      }
    const remaining = w.max_subunits === null ? null : w.max_subunits > used ? w.max_subunits - used : 0n;
    return {
      rail,
      duration: w.duration,
      used_subunits: used.toString(),
      used_count: count,
      max_subunits: w.max_subunits?.toString() ?? null,
      max_count: w.max_count,
      remaining_subunits: remaining?.toString() ?? null,
      remaining_count: w.max_count === null ? null : Math.max(0, w.max_count - count),
    };
  });
}

export function evaluate(f: AttemptFacts): Evaluation {
  const a = f.attempt;
  const rail = `${a.chain}:${a.network}:${a.token}`;
  const mainnet = a.network === 'mainnet';
  const p = f.policy;
  const limits = p?.limits.get(rail);
  // a wallet's window usage is its owner's business: never computed for another merchant (issue 18)
  const owned = f.wallet.merchant_id === f.caller_merchant_id;
  const windows = owned ? windowUsage(limits, rail, f.spends, f.now) : [];
  const gate = networkGate(
    { sandbox: f.merchant.sandbox, kyc_status: f.merchant.kyc_verified ? 'verified' : null },
    a.network,
    'agent spends',
  );

  // one function over the rule names, not an object of eleven closures built per evaluation (every attempt)
  const check = (rule: RuleName): Reason | undefined => {
    switch (rule) {
      case 'ownership':
        return owned ? undefined : 'wallet_not_owned';
      case 'wallet_type':
        return f.wallet.type !== 'agent' ? 'not_agent_wallet' : undefined;
      case 'sandbox_mainnet':
        return gate?.reason === 'sandbox_mainnet'
          ? 'sandbox_mainnet_not_allowed'
          : gate?.reason === 'live_testnet'
            ? 'live_testnet_not_allowed'
            : undefined;
      case 'kyc':
        return gate?.reason === 'kyc_required' ? 'kyc_required' : undefined;
      case 'rail':
        if (!f.rail_enabled) return 'rail_not_enabled';
        if (f.wallet.chain !== a.chain || f.wallet.network !== a.network) return 'wallet_rail_mismatch';
        return undefined;
      case 'policy':
        if (!p) return 'no_policy';
        if (p.expires_at !== null && p.expires_at <= f.now.toISOString()) return 'policy_expired';
        if (mainnet && !p.allow_mainnet) return 'policy_mainnet_not_allowed';
        if (!limits) return 'rail_not_in_policy';
        return undefined;
      case 'denylist':
        return p!.denied_targets.some((t) => sameTarget(a.chain, t, a.target)) ? 'target_denied' : undefined;
      case 'allowlist':
        if (p!.allowed_targets.length > 0 && !p!.allowed_targets.some((t) => sameTarget(a.chain, t, a.target))) return 'target_not_allowed';
        if (p!.allowed_api_domains.length > 0 && !(a.api_domain && p!.allowed_api_domains.includes(a.api_domain.toLowerCase())))
          return 'api_domain_not_allowed';
        return undefined;
      case 'per_attempt_cap':
        return limits!.per_attempt !== null && a.amount > limits!.per_attempt ? 'per_attempt_cap_exceeded' : undefined;
      case 'window_caps':
        for (const w of windows) {
          if (w.max_subunits !== null && BigInt(w.used_subunits) + a.amount > BigInt(w.max_subunits)) return 'window_amount_exceeded';
          if (w.max_count !== null && w.used_count + 1 > w.max_count) return 'window_count_exceeded';
        }
        return undefined;
      case 'approval':
        return !f.approving && limits!.approval_above !== null && a.amount > limits!.approval_above ? 'approval_threshold' : undefined;
    }
  };

  const trace: RuleResult[] = [];
  for (const rule of RULE_ORDER) {
    const reason = check(rule);
    trace.push(reason ? { rule, passed: false, reason } : { rule, passed: true });
    if (reason) return { status: rule === 'approval' ? 'approval_required' : 'denied', reason, trace, windows };
  }
  return { status: 'pending', trace, windows };
}

/** The policy as the API shows it (amounts back to digit strings). */
export function presentPolicyBody(p: Policy) {
  const limits: Record<string, RailLimitsInput> = {};
  for (const [rail, l] of p.limits) {
    limits[rail] = {
      ...(l.per_attempt !== null ? { per_attempt_subunits: l.per_attempt.toString() } : {}),
      ...(l.approval_above !== null ? { approval_above_subunits: l.approval_above.toString() } : {}),
      windows: l.windows.map((w) => ({
        duration: w.duration,
        ...(w.max_subunits !== null ? { max_subunits: w.max_subunits.toString() } : {}),
        ...(w.max_count !== null ? { max_count: w.max_count } : {}),
      })),
    };
  }
  return {
    limits,
    allowed_targets: p.allowed_targets,
    denied_targets: p.denied_targets,
    allowed_api_domains: p.allowed_api_domains,
    allow_mainnet: p.allow_mainnet,
    expires_at: p.expires_at,
  };
}
