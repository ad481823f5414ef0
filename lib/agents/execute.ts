/**
 * `execute`: an allowed attempt that settles inside the ledger and is still awaiting its execution posts
 * its pending transfer. A new attempt settles in its own decision's write (reserve.ts); this finishes the
 * ones written awaiting execution before that (the scanner, or a redeem, runs it). Real money that moved
 * to another of our wallets follows on chain as a custody move. Executing twice answers the settled attempt.
 */
import type { WriteOp } from '../store/port.ts';
import { notFound } from '../core/errors.ts';
import { LedgerBatch } from '../ledger/index.ts';
import { ATTEMPTS, type SpendAttemptDoc } from '../spend/attempts.ts';
import type { AgentWalletHandler } from './state.ts';
import { spendCustodyOps } from './reserve.ts';

export const execute: AgentWalletHandler<'execute'> = async (store, _state, msg, now) => {
  const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
  if (!a) throw notFound('spend attempt');
  if (a.status !== 'pending' || !a.settlement || a.settlement.status !== 'awaiting_execution') return { reply: { attempt: a } };
  const at = now.toISOString();
  // the credited account (a merchant wallet many agents pay) takes the amount as an add (LedgerBatch): no race on it
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
  if (moved && !moved.simulated) effects.push(...(await spendCustodyOps(store, a, moved.asset, BigInt(moved.amount), at)));
  return { effects, reply: { attempt: doc } };
};
