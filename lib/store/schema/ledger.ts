/** Collections of the ledger, wallets and payouts. */
import type { CollectionSpec } from '../port.ts';

export const LEDGER_COLLECTIONS: CollectionSpec[] = [
  // an owner's accounts are found by their ids' prefix (ownerIds in lib/ledger/accounts.ts), never by an owner index
  { name: 'ledger_accounts' },
  // tx_hash: reconciliation finds what the ledger booked for a transaction; payout_id and tx_hash are
  // empty on most transfers (settlements, agent spends): indexed only where set
  // a wallet's history: its side of each transfer, by the transfer's history key (lib/ledger/wallet-history.ts);
  // a system account's side (most settlements' debits, every payout's credit) has no wallet and no entry
  {
    name: 'ledger_transfers',
    indexes: [
      { fields: ['status', 'kind'] },
      { fields: ['payout_id'], sparse: true },
      { fields: ['tx_hash'], sparse: true },
      { fields: ['debit_wallet_id', 'history_key'], sparse: true },
      { fields: ['credit_wallet_id', 'history_key'], sparse: true },
    ],
  },
  // the rows of transfers before format 3 (lib/ledger/wallet-tx-ids.ts), found by their ids, never by transfer_id
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
