/** Collections of the chains area: deposits found by the chain listeners, their cursors and leases. */
import type { CollectionSpec } from '../port.ts';

export const CHAINS_COLLECTIONS: CollectionSpec[] = [
  /**
   * One document per deposit a listener found (lib/chains/deposit-inbox.ts: DepositDoc), written to the store
   * BEFORE the session actor hears of it. id = <chain>:<network>:<tx hash or signature>:<index> (the log
   * index on Ethereum, -1 for a transaction's own ETH value; the account index on Solana), so that a
   * replay is a duplicate insert and is ignored. status: seen (stored, not yet acknowledged by the
   * session) → credited; reverted (its block left the canonical chain); orphan (never moves a session:
   * a token that is not the session's, another network, or no session holds the address).
   * next_delivery_at is set while a message to the session is owed (claimed by the redelivery scanner).
   */
  {
    name: 'deposits',
    indexes: [
      { fields: ['chain', 'network', 'block_number'] },
      { fields: ['next_delivery_at'] },
      { fields: ['session_id', 'created_at'] },
      { fields: ['status', 'created_at'] },
      { fields: ['created_at'] },
      // refunds: what else the address that paid a session has paid (lib/refunds/destination.ts)
      { fields: ['chain', 'network', 'from_address'] },
    ],
  },
  /**
   * Listener progress. Ethereum: id = ethereum:<network>, the last processed confirmed block and the
   * [number, hash, time] of the recent processed blocks (reorg checks; the backfill's window start). Solana: id = solana:<network>:<address>, the
   * newest processed signature of that address (a session address or its USDC token account).
   */
  { name: 'listener_cursors' },
  /**
   * id = <chain>:<network>: which node listens to that rail set (owner) until expires_at; renewed by
   * compare-and-set while the owner runs, taken over by another node once it lapses.
   */
  { name: 'listener_leases' },
];
