/**
 * A drift: a place where the books and the chain disagree, named by the outbox row, the address, the
 * asset and the difference (chain − books, in the asset's smallest unit: negative when the books say more
 * than the chain holds or more than was spent). Each check produces them; each is kept on record
 * (registry.ts: open, acknowledged, resolved); the operator command prints them one per line and the
 * scanner raises a `reconciliation_drift` alert for each open one.
 */

export type DriftCheck = 'movement' | 'address' | 'platform' | 'outgoing';

export type DriftCode =
  /** two outbox rows name the same on-chain transaction */
  | 'shared_transaction'
  /** a confirmed row's transaction is not on chain */
  | 'missing_on_chain'
  /** a confirmed row's transaction failed on chain */
  | 'failed_on_chain'
  /** the transaction moved something other than the row's intent */
  | 'intent_mismatch'
  /** the fee the row books is not the fee the chain charged */
  | 'fee_mismatch'
  /** a failed row's transaction succeeded on chain */
  | 'failed_but_landed'
  /** the gas wallet spent more on a movement than the ledger books for it (rent, fees, top-up value) */
  | 'unbooked_platform_cost'
  /** the ledger books more gas-wallet spend for a movement than the chain shows */
  | 'overbooked_platform_cost'
  /** platform money (sys:gas, sys:fees) ended in a merchant's balance */
  | 'platform_money_to_merchant'
  /** platform gas parked at an address went below zero: the address's own money paid a platform cost */
  | 'parked_below_zero'
  /** an address holds on chain other than the ledger says (in-flight movements accounted for) */
  | 'balance'
  /** a deposit address holds less than the deposits the ledger still has there */
  | 'deposit_short'
  /** a gas wallet holds less than its books say, with no movement of it still open */
  | 'gas_wallet_short'
  /** money left a platform address in a transaction that belongs to no outbox row */
  | 'unknown_outflow';

export interface Drift {
  check: DriftCheck;
  code: DriftCode;
  chain: string;
  network: string;
  /** the outbox row (chain_txs id), when one is concerned */
  row: string | null;
  address: string | null;
  /** ledger asset `chain:network:TOKEN` */
  asset: string | null;
  /** chain − books in smallest units, as a signed digit string */
  difference: string | null;
  wallet_id?: string | null;
  merchant_id?: string | null;
  message: string;
}

/** The alert subject of a drift: one alert per row, address and asset (and kind). */
export const driftKey = (d: Drift): string => `${d.code}|${d.chain}:${d.network}|${d.row ?? ''}|${d.address ?? ''}|${d.asset ?? ''}`;

/**
 * One line for operators: `DRIFT <check> <code> row=… address=… asset=… difference=… id=drf_…: message`
 * (`id` once the drift is on record: what `reconcile:ack` takes).
 */
export function driftLine(d: Drift & { id?: string }, label = 'DRIFT'): string {
  const parts = [`${label} ${d.check} ${d.code}`];
  if (d.row) parts.push(`row=${d.row}`);
  if (d.address) parts.push(`address=${d.address}`);
  if (d.asset) parts.push(`asset=${d.asset}`);
  if (d.difference !== null) parts.push(`difference=${d.difference}`);
  if (d.id) parts.push(`id=${d.id}`);
  return `${parts.join(' ')}: ${d.message}`;
}
