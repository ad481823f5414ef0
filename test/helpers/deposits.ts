/**
 * Credits a session the way a chain listener does: the deposit is recorded in the store's deposit inbox
 * first, then the session actor is told its key (the actor reads the amount from the record).
 */
import type { Store } from '../../lib/store/port.ts';
import { DEPOSITS, type DepositDoc } from '../../lib/chains/deposit-inbox.ts';

export interface PlantedDeposit {
  key: string;
  tx_hash: string;
  index: number;
  amount_subunits: string;
  token: string;
  confirmations: number;
  block_number?: number;
  detected_at: string;
}

export async function plantDeposit(store: Store, sessionId: string, d: PlantedDeposit): Promise<DepositDoc> {
  const session = await store.get<{ id: string; chain: string; network: string; address: string }>('payment_sessions', sessionId);
  if (!session) throw new Error(`no session ${sessionId}`);
  const doc: DepositDoc = {
    id: d.key,
    chain: session.chain,
    network: session.network,
    token: d.token,
    token_contract: null,
    tx_hash: d.tx_hash,
    index: d.index,
    to_address: session.address,
    from_address: null,
    account: null,
    amount_subunits: d.amount_subunits,
    block_number: d.block_number ?? 1,
    block_hash: null,
    block_time: null,
    confirmations: d.confirmations,
    status: 'seen',
    orphan_reason: null,
    session_id: sessionId,
    delivered: false,
    next_delivery_at: null,
    delivery_attempts: 0,
    last_error: null,
    credit_result: null,
    detected_at: d.detected_at,
    created_at: d.detected_at,
    updated_at: d.detected_at,
    credited_at: null,
    reverted_at: null,
  };
  await store.write([{ op: 'upsert', coll: DEPOSITS, doc }]);
  return doc;
}

/** Plants the deposit and sends the session the credit message that names it. */
export async function creditViaInbox<T = unknown>(
  t: { node: { rt: { store: Store } }; call<R>(action: string, params?: unknown): Promise<R> },
  sessionId: string,
  d: PlantedDeposit,
): Promise<T> {
  await plantDeposit(t.node.rt.store, sessionId, d);
  return t.call<T>('session-actors.send', { id: sessionId, msg: { type: 'credit', key: d.key } });
}
