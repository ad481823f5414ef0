/**
 * Custody moves: an internal transfer (a payout whose destination is one of this service's wallets, or an
 * agent spend settled inside the ledger to one of them) settles in the ledger at once, but the tokens behind it still sit at the sending wallet's address. In the
 * same write as the transfer, a custody move is queued: an on-chain transfer of the same amount and token
 * from the sending wallet's address to the receiving wallet's, executed through the transaction outbox by
 * lib/treasury/custody-mover.ts. Until it confirms, on-chain money out of the receiving wallet waits
 * (`custodyInFlight`), and reconciliation counts it as in flight. Simulated money has no chain: no move.
 */
import type { Doc, Store, WriteOp } from '../store/port.ts';

export const CUSTODY_MOVES = 'custody_moves';

/** waiting (due for its next step) → topup (Ethereum: gas on its way to the sender) → moving → completed | failed */
export type CustodyStatus = 'waiting' | 'topup' | 'moving' | 'completed' | 'failed';
export const UNSETTLED: CustodyStatus[] = ['waiting', 'topup', 'moving', 'failed'];
/**
 * On their way: the chain does not show the move yet, but it will. A move that failed for good is not
 * (payouts from its receiver still wait for it, UNSETTLED, but reconciliation shows its difference).
 */
export const IN_FLIGHT: CustodyStatus[] = ['waiting', 'topup', 'moving'];

export interface CustodyMoveDoc extends Doc {
  /** `custody:<payout id>` or `custody:<spend attempt id>` */
  id: string;
  /** what moved the money inside the ledger: an internal payout, or an agent spend settled in the ledger */
  payout_id: string | null;
  spend_attempt_id?: string | null;
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  token: string;
  asset: string;
  from_wallet_id: string;
  /** the sending wallet's key (wallets' derivation account) */
  from_index: number;
  from_address: string;
  to_wallet_id: string;
  to_address: string;
  amount_subunits: string;
  status: CustodyStatus;
  waiting_reason: string | null;
  /** increases with every new transaction of a stage (a failed top-up or move is tried again) */
  attempt: number;
  topup_tx: string | null;
  move_tx: string | null;
  /** Ethereum: the gas the top-up paid for, pinned on the move */
  gas_limit: string | null;
  gas_price: string | null;
  /** native smallest units paid in network fees (top-ups + move), all by the platform */
  fee_subunits: string | null;
  tx_hash: string | null;
  next_check_at: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

interface WalletRef {
  id: string;
  address: string;
  derivation_index: number;
  chain: string;
  network: string;
}

/** the ledger refs of the move's fee transfers (so they show under the payout or spend that caused it) */
export function custodyRefs(m: CustodyMoveDoc): { payout_id?: string; spend_attempt_id?: string } {
  return m.payout_id ? { payout_id: m.payout_id } : m.spend_attempt_id ? { spend_attempt_id: m.spend_attempt_id } : {};
}

/** the insert that queues the move, for the internal transfer's own write; `cause` a payout id or a spend attempt id */
export function custodyMoveOp(
  cause: string,
  from: WalletRef,
  to: WalletRef,
  token: string,
  asset: string,
  amount: bigint,
  at: string,
  kind: 'payout' | 'spend' = 'payout',
): WriteOp {
  const doc: CustodyMoveDoc = {
    id: `custody:${cause}`,
    payout_id: kind === 'payout' ? cause : null,
    ...(kind === 'spend' ? { spend_attempt_id: cause } : {}),
    chain: from.chain as CustodyMoveDoc['chain'],
    network: from.network as CustodyMoveDoc['network'],
    token,
    asset,
    from_wallet_id: from.id,
    from_index: from.derivation_index,
    from_address: from.address,
    to_wallet_id: to.id,
    to_address: to.address,
    amount_subunits: amount.toString(),
    status: 'waiting',
    waiting_reason: null,
    attempt: 0,
    topup_tx: null,
    move_tx: null,
    gas_limit: null,
    gas_price: null,
    fee_subunits: null,
    tx_hash: null,
    next_check_at: at,
    created_at: at,
    updated_at: at,
    completed_at: null,
  };
  return { op: 'insert', coll: CUSTODY_MOVES, doc };
}

/**
 * Custody moves into this wallet, queued before `before` (ISO time), not yet confirmed: on-chain money
 * out of the wallet that was accepted after them relies on them and must wait. Only earlier moves count,
 * so a move back (B → A after A → B) never waits for itself.
 */
export async function custodyInFlight(store: Store, walletId: string, before: string, self?: string): Promise<CustodyMoveDoc[]> {
  const moves = await store.find<CustodyMoveDoc>(CUSTODY_MOVES, { to_wallet_id: walletId, status: { $in: UNSETTLED } });
  // a move asking: ties in time are broken by id, so of two moves never both wait for the other
  return moves.filter((m) => m.id !== self && (m.created_at < before || (m.created_at === before && (!self || m.id < self))));
}
