/** Collections of the transaction outbox (lib/chains/broadcast) and sweeps (lib/treasury/sweeps.ts). */
import type { CollectionSpec } from '../port.ts';

export const BROADCAST_COLLECTIONS: CollectionSpec[] = [
  /**
   * Outgoing chain transactions (ChainTxDoc): id = the purpose's key (`payout:<po_id>`, `sweep:<id>:…`);
   * the signed bytes of every attempt, nonce or blockhash, status signed → sent → confirmed | failed;
   * next_check_at is the due time the broadcaster claims.
   */
  {
    name: 'chain_txs',
    indexes: [
      { fields: ['next_check_at'] },
      { fields: ['ref'] },
      { fields: ['status', 'created_at'] },
      // reconciliation: final rows since its cursor, a transaction found on chain back to its row
      { fields: ['status', 'final_at'] },
      { fields: ['tx_hash'] },
      { fields: ['from_address', 'nonce'] },
    ],
  },
  /** id = <chain>:<network>:<address>: the next nonce the service gives that Ethereum sender */
  { name: 'chain_nonces' },
  /** one sweep of a deposit address into its merchant wallet (lib/treasury/sweeps.ts) */
  { name: 'sweeps', indexes: [{ fields: ['next_check_at'] }, { fields: ['session_id'] }] },
  /** id = the deposit key: which sweep took that deposit (a unique insert, so no deposit is swept twice) */
  { name: 'sweep_claims' },
  /**
   * id `custody:<payout id>`: the on-chain move behind an internal transfer (lib/payouts/custody.ts,
   * executed by lib/treasury/custody-mover.ts); to_wallet_id + status answer "is money still on its way here"
   */
  { name: 'custody_moves', indexes: [{ fields: ['next_check_at'] }, { fields: ['to_wallet_id', 'status'] }, { fields: ['status'] }] },
];
