/** Collections of the sessions area. */
import type { CollectionSpec } from '../port.ts';

export const SESSIONS_COLLECTIONS: CollectionSpec[] = [
  /**
   * One document per payment session (the session actor's state, lib/sessions/payment-session.ts).
   * address+chain+network is unique (no address is ever handed out twice) and is what the chain
   * listeners look deposits up by; expiry_due_at is the persisted due time the expiry scanner claims
   * (null once the session is terminal).
   */
  {
    name: 'payment_sessions',
    indexes: [
      { fields: ['address', 'chain', 'network'], unique: true },
      // partial: a terminal session's is null and leaves the index (migration 7)
      { fields: ['expiry_due_at'], sparse: true },
      // GET /v1/payment_sessions and the operators' list: newest first (by id) per merchant, by status
      { fields: ['merchant_id', 'id'] },
      { fields: ['merchant_id', 'status', 'id'] },
    ],
    // set on demo sessions only (lib/sessions/new-session.ts): merchants' sessions are never purged
    expiresField: 'purge_at',
  },
  /** id = chain: the next unreserved BIP-44 / SLIP-0010 address index (lib/addresses/addresses.ts) */
  { name: 'address_indexes' },
  /** id = <merchant_id>:<chain>:<network>:<token>:<UTC day>: the day's session volume in smallest units (DAILY_VOLUME_LIMIT) */
  { name: 'session_volume', expiresField: 'expires_at' },
  /** id = session id: its share of a day's session_volume (lib/sessions/volume.ts), so that it is counted once */
  { name: 'session_volume_holds', expiresField: 'expires_at' },
];
