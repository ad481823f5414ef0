/**
 * The merchant a request acts for, in one place for every facade: the merchant behind the API key
 * (anyone else is refused, 401), and, where a rule needs it, its stored standing (KYC status, rail policy).
 */
import type { Context } from 'moleculer';
import { merchantCaller, type Caller } from '../core/request-meta.ts';
import { unauthorized } from '../core/errors.ts';
import type { Store } from '../store/port.ts';
import type { MerchantStanding } from '../core/environment.ts';
import type { MerchantState } from './merchant.ts';
import type { RailPolicy } from './rail-policy.ts';

export type MerchantCaller = Extract<Caller, { kind: 'merchant' }>;
/** What withStanding needs of a merchant caller: who it is, and the standing the gateway read, if it did. */
export type StandingSource = Pick<MerchantCaller, 'merchant_id' | 'sandbox' | 'standing'>;

/** The calling merchant (from its API key, no store read); any other caller is a 401. */
export function callingMerchant(ctx: Context): MerchantCaller {
  const caller = merchantCaller(ctx);
  if (!caller) throw unauthorized();
  return caller;
}

/** The calling merchant and what the environment gate and the rail policy read of its account. */
export interface CallingMerchant extends MerchantStanding {
  id: string;
  sandbox: boolean;
  kyc_status?: string;
  rail_policy?: RailPolicy | null;
}

/**
 * A merchant caller with its stored standing: as the gateway read it to authenticate the request, else
 * one read of the account (a caller the gateway did not authenticate, such as an internal call).
 */
export async function withStanding(store: Store, caller: StandingSource): Promise<CallingMerchant> {
  const s = caller.standing;
  if (s)
    return {
      id: caller.merchant_id,
      sandbox: caller.sandbox,
      kyc_status: s.kyc_status,
      rail_policy: (s.rail_policy as RailPolicy) ?? null,
    };
  const m = await store.get<Pick<MerchantState, 'id' | 'kyc_status' | 'rail_policy'>>('merchants', caller.merchant_id);
  return { id: caller.merchant_id, sandbox: caller.sandbox, kyc_status: m?.kyc_status, rail_policy: m?.rail_policy ?? null };
}

/** The calling merchant with its stored standing (withStanding); any other caller is a 401. */
export async function loadCallingMerchant(store: Store, ctx: Context): Promise<CallingMerchant> {
  return withStanding(store, callingMerchant(ctx));
}
