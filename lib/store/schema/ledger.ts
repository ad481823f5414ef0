/** Collections of the ledger, wallets and payouts. */
import type { CollectionSpec } from '../port.ts';

export const LEDGER_COLLECTIONS: CollectionSpec[] = [
  // an owner's accounts are found by their ids' prefix (ownerIds in lib/ledger/accounts.ts), never by an owner index
  { name: 'ledger_accounts' },
  // tx_hash: reconciliation finds what the ledger booked for a transaction; payout_id and tx_hash are
  // empty on most transfers (settlements, agent spends): indexed only where set
  {
    name: 'ledger_transfers',
    indexes: [{ fields: ['status', 'kind'] }, { fields: ['payout_id'], sparse: true }, { fields: ['tx_hash'], sparse: true }],
  },
  // a transfer's rows are found by their ids (derived from the transfer: lib/ledger/wallet-tx-ids.ts), never by transfer_id
  { name: 'wallet_transactions', indexes: [{ fields: ['wallet_id', 'sort_key'] }] },
  {
    name: 'wallets',
    indexes: [
      { fields: ['merchant_id', 'id'] },
      { fields: ['address'], unique: true },
      { fields: ['default_key'], unique: true },
      // one index sequence per chain, shared by its networks (the derivation path has no network)
      { fields: ['chain', 'derivation_index'], unique: true },
    ],
  },
  { name: 'payout_volume', expiresField: 'expires_at' },
  {
    name: 'payouts',
    indexes: [{ fields: ['merchant_id', 'id'] }, { fields: ['wallet_id', 'id'] }, { fields: ['status', 'execution', 'next_attempt_at'] }],
  },
];
