/** Collections of reconciliation (lib/treasury/reconcile/records.ts): what each run already checked. */
import type { CollectionSpec } from '../port.ts';

export const RECONCILE_COLLECTIONS: CollectionSpec[] = [
  /** one per final outbox row checked against the chain (id = the row's id), or per transfer out without a row */
  { name: 'recon_rows', indexes: [{ fields: ['status', 'chain', 'network'] }] },
  /** id `<chain>:<network>:<hash>` → the row whose transaction it is (the insert is the uniqueness check) */
  { name: 'recon_txs' },
  /** one per movement (rows of one ref), checked once it is over: gas-wallet spend against the books */
  { name: 'recon_groups', indexes: [{ fields: ['status', 'chain', 'network'] }] },
  /** id drf_<hash of its place>: one per drift found, open, acknowledged or resolved (registry.ts) */
  { name: 'recon_drifts', indexes: [{ fields: ['state', 'chain', 'network'] }] },
  /** cursors and gas-wallet calibration */
  { name: 'recon_state' },
];
