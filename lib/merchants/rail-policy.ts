/**
 * The merchant rail policy (the spec's planned rule, Errors: "when the intersection of merchant rail
 * policy, product/environment restriction and globally enabled certified rails is empty, creation fails
 * before a payable session exists"): the rails a merchant accepts, as `<chain>:<network>:<token>` keys.
 * No policy (null) means every enabled rail, as before the policy existed. Pure rules; the merchant actor
 * stores the policy (lib/merchants/merchant.ts) and session creation, checkout intents and x402 challenges apply it.
 */
import { badRequest, type ServiceError } from '../core/errors.ts';
import { allowsNetwork } from '../core/environment.ts';
import { railKey, type Rail } from '../../config/rails.ts';

/** A merchant's stored policy: the rails it accepts, in the rail list's order. */
export interface RailPolicy {
  allowed_rails: string[];
  updated_at: string;
}

export const RAIL_POLICY_PATH = '/v1/me/rail-policy';

/**
 * The canonical policy of a PUT body: every entry a rail the service knows (enabled or not: a merchant
 * may name a mainnet rail before it is configured), in the order of the known rail list. An unknown
 * entry is a 400 naming it.
 */
export function parseRailPolicy(allowed: string[], known: Rail[]): string[] {
  const keys = known.map(railKey);
  allowed.forEach((entry, i) => {
    if (!keys.includes(entry)) {
      throw badRequest(`allowed_rails[${i}] '${entry}' is not a rail; use <chain>:<network>:<token> keys such as ${keys[0]}`, {
        field: `allowed_rails[${i}]`,
        remediation: `Use rails listed by GET /v1/payment_methods, as <chain>:<network>:<token>: ${keys.join(', ')}.`,
      });
    }
  });
  return keys.filter((k) => allowed.includes(k));
}

type Policy = Pick<RailPolicy, 'allowed_rails'> | null | undefined;

/** The rail keys of `keys` that a policy (null: none) lets the merchant be paid on. */
export const allowedKeys = (policy: Policy, keys: string[]): string[] =>
  policy ? keys.filter((k) => policy.allowed_rails.includes(k)) : keys;

/** The rails a merchant can be paid on now: enabled, in its environment (sandbox: testnet), and allowed by its policy. */
export function effectiveRails(policy: Policy, enabled: Rail[], sandbox: boolean): string[] {
  return allowedKeys(policy, enabled.filter((r) => allowsNetwork(sandbox, r.network)).map(railKey));
}

/** The refusal of a rail outside the policy: a 400 on paymentMethod (or `field`) that names the rail and what is allowed. */
export function railPolicyRefusal(rails: string[], policy: Pick<RailPolicy, 'allowed_rails'>, field = 'paymentMethod'): ServiceError {
  const named = rails.length === 1 ? rails[0] : rails.join(', ');
  return badRequest(
    `${named} ${rails.length === 1 ? 'is' : 'are'} not allowed by the merchant's rail policy (allowed_rails: ${policy.allowed_rails.join(', ')})`,
    {
      field,
      remediation: `Pay on one of ${policy.allowed_rails.join(', ')}, or change the policy with PUT ${RAIL_POLICY_PATH}.`,
    },
  );
}

/** Refuses `rail` when the policy excludes it. */
export function checkRailPolicy(policy: Policy, rail: Pick<Rail, 'chain' | 'network' | 'token'>, field?: string): void {
  if (policy && allowedKeys(policy, [railKey(rail)]).length === 0) throw railPolicyRefusal([railKey(rail)], policy, field);
}

/** GET/PUT /v1/me/rail-policy: the stored policy (null: none) and the rails the merchant can be paid on now. */
export function presentRailPolicy(m: { sandbox: boolean; rail_policy?: RailPolicy | null }, enabled: Rail[]) {
  return {
    allowed_rails: m.rail_policy?.allowed_rails ?? null,
    effective_rails: effectiveRails(m.rail_policy, enabled, m.sandbox),
    updated_at: m.rail_policy?.updated_at ?? null,
  };
}
