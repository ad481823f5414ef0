/**
 * What an allowed spend attempt writes, in the same atomic write as the attempt: for an on-chain target its
 * pending ledger transfer and the payout that carries it out; for one of our wallets or an x402 payTo its
 * transfer, reserved and posted at once (the spend settles in its decision's write, one write in all).
 * Shared by a fresh attempt and a merchant's approval.
 */
import type { Store, WriteOp } from '../store/port.ts';
import type { SpendAttemptDoc, Execution, AttemptContext, ExtraReason } from '../spend/attempts.ts';
import { dailyVolume, withinAmountLimit } from '../payouts/limits.ts';
import { LedgerBatch, isLedgerError, walletAccount, accountId } from '../ledger/index.ts';
import { PAYOUTS, type PayoutDoc } from '../payouts/model.ts';
import { custodyMoveOp } from '../payouts/custody.ts';
import type { WalletDoc } from '../wallets/model.ts';
import { encodeHeader } from '../x402/challenge.ts';
import { X402_PAID, type ChallengePaymentDoc, type SpendEntry, type Windowed } from './state.ts';
import { add } from './windows.ts';

/** The X-Service-Payment value of an agent-wallet spend that pays an x402 challenge. */
export const agentProofHeader = (challengeId: string, walletId: string, attemptId: string) =>
  encodeHeader({
    x402Version: 1,
    scheme: 'agent_wallet',
    memo: challengeId,
    payload: { agent_wallet_id: walletId, spend_attempt_id: attemptId },
  });

/** The payout that carries an attempt to an address on chain. */
function payoutOf(a: SpendAttemptDoc, payoutId: string, asset: string, at: string): PayoutDoc {
  return {
    id: payoutId,
    merchant_id: a.merchant_id,
    wallet_id: a.agent_wallet_id,
    chain: a.chain as PayoutDoc['chain'],
    network: a.network as PayoutDoc['network'],
    token: a.token_symbol,
    asset,
    amount_subunits: a.amount_subunits,
    destination: a.target,
    destination_wallet_id: null,
    status: 'pending',
    execution: 'chain',
    simulated: false,
    tx_hash: null,
    fee_subunits: null,
    failure_reason: null,
    metadata: { spend_attempt_id: a.id },
    next_attempt_at: at,
    created_at: at,
    updated_at: at,
    completed_at: null,
  };
}

/**
 * Real money that moved inside the ledger to another of our wallets follows on chain: the custody move
 * (lib/payouts/custody.ts) written with the settlement. Nothing for simulated money or one address.
 */
export async function spendCustodyOps(store: Store, a: SpendAttemptDoc, asset: string, amount: bigint, at: string): Promise<WriteOp[]> {
  if (!a.target_wallet_id) return [];
  const [from, to] = await Promise.all([
    store.get<WalletDoc>('wallets', a.agent_wallet_id),
    store.get<WalletDoc>('wallets', a.target_wallet_id),
  ]);
  if (!from || !to || from.chain !== to.chain || from.network !== to.network || from.address === to.address) return [];
  return [custodyMoveOp(a.id, from, to, a.token_symbol, asset, amount, at, 'spend')];
}

/**
 * The ledger (and payout) writes of an allowed attempt. The agent's on-chain money is used first, then
 * its simulated (sandbox) money; simulated money never leaves on chain.
 */
async function reserve(
  store: Store,
  a: SpendAttemptDoc,
  payoutId: string,
  now: Date,
  limits: AttemptContext['payout_limits'],
  /** its transfer's id (the attempt's or the payout's) was minted for this decision */
  fresh: boolean,
): Promise<{ ops: WriteOp[]; a: SpendAttemptDoc; entry: SpendEntry } | { denied: ExtraReason }> {
  const asset = `${a.chain}:${a.network}:${a.token_symbol}`;
  const amount = BigInt(a.amount_subunits);
  // the credited account (a merchant wallet many agents pay) takes the amount as an add (LedgerBatch): no race on it
  const b = new LedgerBatch(store, now);
  const real = await b.available(walletAccount(a.agent_wallet_id, asset));
  const sim = await b.available(walletAccount(a.agent_wallet_id, asset, true));
  const simulated = real < amount;
  if (simulated && sim < amount) return { denied: 'insufficient_funds' };
  const execution: Execution = a.target_kind === 'chain' ? (simulated ? 'simulated' : 'chain') : 'ledger';
  // executed on chain it is a payout: the platform's payout limits bind it like any other
  let volume: WriteOp | null = null;
  if (execution === 'chain' && limits) {
    if (!withinAmountLimit(limits.limits, amount, limits.decimals)) return { denied: 'payout_amount_limit_exceeded' };
    const v = await dailyVolume(store, limits.limits, a.merchant_id, { key: asset, decimals: limits.decimals }, amount, now);
    if (!v.ok) return { denied: 'daily_payout_limit_exceeded' };
    volume = v.op;
  }
  const transferId = execution === 'chain' ? payoutId : a.id;
  const credit =
    a.target_kind === 'chain'
      ? accountId(simulated ? 'sys:simulated' : 'sys:payouts', asset)
      : walletAccount(a.target_wallet_id!, asset, simulated);
  try {
    await b.transfer({
      id: transferId,
      fresh,
      kind: 'agent_spend',
      asset,
      amount,
      pending: true,
      spend_attempt_id: a.id,
      debit_account: walletAccount(a.agent_wallet_id, asset, simulated),
      credit_account: credit,
      ...(simulated ? { simulated: true } : {}),
      ...(execution === 'chain' ? { payout_id: payoutId } : {}),
    });
  } catch (e) {
    if (isLedgerError(e, 'insufficient_funds')) return { denied: 'insufficient_funds' };
    throw e;
  }
  const at = now.toISOString();
  // settled inside the ledger: posted in the same write as the reservation
  if (execution !== 'chain') await b.post(transferId);
  const ops = b.ops();
  if (volume) ops.push(volume);
  if (execution === 'ledger' && !simulated) ops.push(...(await spendCustodyOps(store, a, asset, amount, at)));
  const next: SpendAttemptDoc = {
    ...a,
    status: 'pending',
    reason: null,
    ledger_entry_id: transferId,
    updated_at: at,
    settlement:
      execution === 'chain'
        ? { status: 'submitted', execution, payout_id: payoutId, tx_hash: null, settled_at: null }
        : { status: 'settled', execution, settled_at: at },
    execute_due_at: null,
    spend_reference: a.target_kind === 'x402' ? agentProofHeader(a.challenge_id!, a.agent_wallet_id, a.id) : a.spend_reference,
  };
  if (execution === 'chain') ops.push({ op: 'insert', coll: PAYOUTS, doc: payoutOf(a, payoutId, asset, at) });
  // one payment per challenge: of two wallets (or a wallet and an on-chain proof in flight) paying it at
  // once, the insert lets one through. It is the reference's idempotency record too (./attempt.ts)
  if (a.target_kind === 'x402') {
    const paid: ChallengePaymentDoc = {
      id: a.challenge_id!,
      attempt_id: a.id,
      agent_wallet_id: a.agent_wallet_id,
      request_hash: a.request_hash,
      created_at: at,
    };
    ops.push({ op: 'insert', coll: X402_PAID, doc: paid });
  }
  return {
    ops,
    a: next,
    entry: { attempt_id: a.id, transfer_id: transferId, rail: asset, amount: a.amount_subunits, at, final: execution !== 'chain' },
  };
}

/**
 * An x402 payment that would buy nothing: its challenge is closed, or another attempt or an on-chain proof
 * paid it. `payment`: the challenge's payment row as the caller read it in this decision (undefined: unread).
 */
async function challengeClosed(
  store: Store,
  a: SpendAttemptDoc,
  target: AttemptContext['target'],
  payment: ChallengePaymentDoc | null | undefined,
): Promise<boolean> {
  if (a.target_kind !== 'x402') return false;
  if (target.kind !== 'x402' || target.closed) return true;
  const paid = payment !== undefined ? payment : await store.get<ChallengePaymentDoc>(X402_PAID, a.challenge_id!);
  return !!paid && paid.attempt_id !== a.id;
}

/**
 * Carries out what the policy allowed: an attempt the policy let through (`pending`) is denied when its
 * x402 challenge is closed or the money is not there, and otherwise reserved; any other verdict passes as is.
 */
export async function reserveAllowed(
  store: Store,
  doc: SpendAttemptDoc,
  ctx: Pick<AttemptContext, 'target' | 'payout_limits'>,
  payoutId: string,
  window: Windowed,
  now: Date,
  /** a new attempt: its id and its payout id were minted for this decision (an approval's attempt is older) */
  fresh = false,
  /** the x402 challenge's payment row, already read in this decision (undefined: not read) */
  payment?: ChallengePaymentDoc | null,
): Promise<{ doc: SpendAttemptDoc; ops: WriteOp[]; window: Windowed }> {
  if (doc.status !== 'pending') return { doc, ops: [], window };
  if (await challengeClosed(store, doc, ctx.target, payment))
    return { doc: { ...doc, status: 'denied', reason: 'challenge_closed' }, ops: [], window };
  const r = await reserve(store, doc, payoutId, now, ctx.payout_limits, fresh);
  if ('denied' in r) return { doc: { ...doc, status: 'denied', reason: r.denied }, ops: [], window };
  return { doc: r.a, ops: r.ops, window: add(window, r.entry) };
}
