/**
 * A new session's state, and its deposit address: one fresh index per session (the allocator reserves
 * it in the store), derived off the event loop. The derivation is behind `AddressSource` so that a
 * faster source (a pre-derived pool) replaces it without touching the sessions rules.
 */
import { newId } from '../core/ids.ts';
import type { Environment } from '../runtime/metrics.ts';
import type { Rail } from '../../config/rails.ts';
import type { AddressChain } from '../addresses/addresses.ts';
import type { PaymentSessionState } from './payment-session.ts';
import type { CreateRequest } from './policy.ts';

export interface AddressSource {
  /** the BIP-32 fingerprint of the key material addresses come from */
  readonly fingerprint: string;
  /** a fresh deposit address of `chain`, and its derivation index */
  allocate(chain: AddressChain): Promise<{ address: string; index: number }>;
}

/** how long an expired or paid demo session is kept before housekeeping removes it */
export const DEMO_RETENTION_MS = 24 * 3600_000;

export interface SessionOwner {
  merchant_id: string;
  sandbox: boolean;
  demo: boolean;
  environment: Environment;
}

/** The `create` message's session: pending, nothing received, due to expire after expiresMs. */
export function newSessionState(
  owner: SessionOwner,
  req: CreateRequest,
  address: { address: string; index: number; fingerprint: string },
  now: Date,
  id = newId('ps'),
): PaymentSessionState {
  const at = now.toISOString();
  const rail: Rail = req.rail;
  return {
    id,
    merchant_id: owner.merchant_id,
    demo: owner.demo,
    sandbox: owner.sandbox,
    environment: owner.environment,
    method_id: 0,
    chain: rail.chain,
    network: rail.network,
    token: rail.token,
    decimals: rail.decimals,
    expected_subunits: req.expected.toString(),
    received_subunits: '0',
    address: address.address,
    address_index: address.index,
    key_fingerprint: address.fingerprint,
    status: 'pending',
    metadata: req.metadata,
    ...(req.return_url ? { return_url: req.return_url } : {}),
    ...(req.quote ? { quote: req.quote } : {}),
    expires_at: new Date(now.getTime() + req.expiresMs).toISOString(),
    expiry_due_at: null,
    completed_at: null,
    expired_at: null,
    created_at: at,
    updated_at: at,
    deposits: [],
    events: [],
    // public demo sessions are purged a day after they expire (housekeeping): anyone can make them
    ...(owner.demo ? { purge_at: new Date(now.getTime() + req.expiresMs + DEMO_RETENTION_MS).toISOString() } : {}),
  };
}
