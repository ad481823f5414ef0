/**
 * `attempt`: a spend request decided against the policy and the windows. A reference is the owner's
 * idempotency key (the same reference and body answers the first attempt; another body is a 409); a dry
 * run evaluates and writes nothing; an allowed attempt reserves its money in the same write.
 */
import { createHash } from 'node:crypto';
import type { WriteOp } from '../store/port.ts';
import { conflict, IDEMPOTENCY_MISMATCH, REMEDIATION } from '../core/errors.ts';
import { ATTEMPTS, type SpendAttemptDoc, type AttemptInput } from '../spend/attempts.ts';
import { REFERENCES, X402_PAID, nextState, type AgentWalletHandler, type ChallengePaymentDoc } from './state.ts';
import { evaluateAttempt, liveSpends } from './windows.ts';
import { reserveAllowed } from './reserve.ts';

export const referenceId = (walletId: string, reference: string) =>
  `${walletId}:${createHash('sha256').update(reference).digest('hex').slice(0, 40)}`;

export function requestHash(input: AttemptInput): string {
  const { target, amount_subunits, token_symbol, chain, network, api_domain, reference, metadata } = input;
  return createHash('sha256')
    .update(JSON.stringify([target, amount_subunits, token_symbol, chain, network, api_domain, reference, metadata]))
    .digest('hex');
}

export const attempt: AgentWalletHandler<'attempt'> = async (store, state, msg, now) => {
  const at = now.toISOString();
  const { input, ctx } = msg;
  // a reference is the owner's idempotency key: another merchant's (always denied) attempt neither
  // reads the owner's attempt through it nor takes it first
  const owned = ctx.wallet.merchant_id === ctx.caller_merchant_id;
  const refId = input.reference !== null && owned ? referenceId(ctx.wallet.id, input.reference) : null;
  // only a reference's idempotency compares it (a sha256 of the JSON request: a few µs of every attempt)
  const hash = input.reference !== null ? requestHash(input) : null;
  // an x402 spend's reference is its challenge id: the challenge's payment row, written when the spend
  // reserved, is then the reference's record (one row less a paid request); read once for both uses
  const payment =
    ctx.target.kind === 'x402' && !msg.dry_run ? await store.get<ChallengePaymentDoc>(X402_PAID, ctx.target.challenge_id!) : undefined;
  if (refId && hash && !msg.dry_run) {
    const mine =
      payment?.agent_wallet_id === ctx.wallet.id && payment.attempt_id && payment.request_hash
        ? { attempt_id: payment.attempt_id, request_hash: payment.request_hash }
        : null;
    const ref = mine ?? (await store.get<{ id: string; attempt_id: string; request_hash: string }>(REFERENCES, refId));
    if (ref) {
      if (ref.request_hash !== hash) throw conflict(IDEMPOTENCY_MISMATCH, { remediation: REMEDIATION.idempotency });
      const existing = await store.get<SpendAttemptDoc>(ATTEMPTS, ref.attempt_id);
      if (existing) return { reply: { attempt: existing, created: false } };
    }
  }
  const { changed, ...window } = await liveSpends(store, state, now);
  const evaluation = evaluateAttempt(state, window, input, ctx, now, false);
  if (msg.dry_run) return { reply: { evaluation } };
  const base: SpendAttemptDoc = {
    id: msg.attempt_id,
    merchant_id: ctx.caller_merchant_id,
    agent_wallet_id: ctx.wallet.id,
    ...input,
    status: evaluation.status,
    reason: evaluation.reason ?? null,
    policy_id: state?.policy?.id ?? null,
    ledger_entry_id: null,
    spend_reference: null,
    target_kind: ctx.target.kind,
    target_wallet_id: ctx.target.wallet_id,
    challenge_id: ctx.target.challenge_id,
    settlement: null,
    execute_due_at: null,
    request_hash: hash,
    created_at: at,
    updated_at: at,
  };
  // attempt_id and payout_id are minted by the request for this decision: no transfer holds them yet
  const r = await reserveAllowed(store, base, ctx, msg.payout_id, window, now, true, payment);
  const effects: WriteOp[] = [{ op: 'insert', coll: ATTEMPTS, doc: r.doc }, ...r.ops];
  // a reserved x402 spend's reference is recorded by its challenge's payment row (reserve.ts)
  const paysChallenge = r.doc.target_kind === 'x402' && r.doc.status === 'pending';
  if (refId && hash && !paysChallenge)
    effects.push({ op: 'insert', coll: REFERENCES, doc: { id: refId, attempt_id: r.doc.id, request_hash: hash, created_at: at } });
  const touched = r.doc.status === 'pending' || changed;
  return {
    ...(touched && state ? { state: nextState(state, ctx.caller_merchant_id, r.window, at) } : {}),
    effects,
    reply: { attempt: r.doc, evaluation, created: true },
  };
};
