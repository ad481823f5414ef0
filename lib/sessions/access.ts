/** Who may see and simulate a session: pure rules, the facade turns a refusal into its HTTP error. */
import type { Caller } from '../core/request-meta.ts';
import type { PaymentSessionState } from './payment-session.ts';

/**
 * Reading: the owning merchant; anyone with a valid key for demo sessions; without credentials only demo
 * sessions (nothing tells an anonymous caller whether another id exists: 401, not 404).
 */
export function readAccess(s: PaymentSessionState | null, caller: Caller | undefined): 'ok' | 'not_found' | 'unauthorized' {
  if (caller?.kind === 'merchant') return s && (s.merchant_id === caller.merchant_id || s.demo) ? 'ok' : 'not_found';
  return s && s.demo ? 'ok' : 'unauthorized';
}

/**
 * Simulating a non-demo session without being its merchant (anonymous or another merchant) looks like an
 * unknown id, as on GET (a 403 would tell that the id exists), and is an abuse signal.
 */
export const simulateHidden = (s: PaymentSessionState, callerMerchantId: string | null): boolean =>
  !s.demo && callerMerchantId !== s.merchant_id;
