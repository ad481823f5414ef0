/**
 * `execute`: an allowed attempt that settles inside the ledger (to one of our wallets or an x402 payTo)
 * posts its pending transfer. Real money that moved to another of our wallets follows on chain as a
 * custody move (lib/payouts/custody.ts). Executing twice answers the settled attempt.
 */
import type { WriteOp } from '../store/port.ts';
import { notFound } from '../core/errors.ts';
import { LedgerBatch } from '../ledger/index.ts';
import { custodyMoveOp } from '../payouts/custody.ts';
import type { WalletDoc } from '../wallets/model.ts';
import { ATTEMPTS, type SpendAttemptDoc } from '../spend/attempts.ts';
import type { AgentWalletHandler } from './state.ts';

export const execute: AgentWalletHandler<'execute'> = async (store, _state, msg, now) => {
  const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
  if (!a) throw notFound('spend attempt');
  if (a.status !== 'pending' || !a.settlement || a.settlement.status !== 'awaiting_execution') return { reply: { attempt: a } };
  const at = now.toISOString();
  const b = new LedgerBatch(store, now);
  await b.post(a.ledger_entry_id!);
  const doc: SpendAttemptDoc = {
    ...a,
    settlement: { ...a.settlement, status: 'settled', settled_at: at },
    execute_due_at: null,
    updated_at: at,
  };
  const effects: WriteOp[] = [{ op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 }, ...b.ops()];
  const moved = await b.transferDoc(a.ledger_entry_id!);
  if (a.target_wallet_id && moved && !moved.simulated) {
    const [from, to] = await Promise.all([
      store.get<WalletDoc>('wallets', a.agent_wallet_id),
      store.get<WalletDoc>('wallets', a.target_wallet_id),
    ]);
    if (from && to && from.chain === to.chain && from.network === to.network && from.address !== to.address)
      effects.push(custodyMoveOp(a.id, from, to, a.token_symbol, moved.asset, BigInt(moved.amount), at, 'spend'));
  }
  return { effects, reply: { attempt: doc } };
};
