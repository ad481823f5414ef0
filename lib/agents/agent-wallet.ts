/**
 * The agent-wallet actor (one per wallet id): its current spend policy and the spends its windows count.
 * Attempts on one wallet are decided one at a time here, so concurrent attempts can never together
 * reserve more than a window cap; an allowed attempt writes the attempt, its pending ledger transfer (and,
 * for an on-chain target, the payout that carries it out) and the updated window in one atomic write.
 */
import { createHash } from 'node:crypto';
import type { ActorBehavior, Decision } from '../core/actor.ts';
import type { Doc, Store, WriteOp } from '../store/port.ts';
import { conflict, notFound, ServiceError } from '../core/errors.ts';
import { IDEMPOTENCY_MISMATCH, REMEDIATION } from '../core/errors.ts';
import {
  evaluate,
  parsePolicy,
  longestWindowMs,
  presentPolicyBody,
  WINDOW_MAX_MS,
  type Evaluation,
  type Policy,
  type PolicyInput,
  type CountedSpend,
} from '../spend/policy.ts';
import {
  ATTEMPTS,
  type SpendAttemptDoc,
  type Execution,
  type WalletFacts,
  type AttemptInput,
  type AttemptContext,
} from '../spend/attempts.ts';

export type { WalletFacts, AttemptInput, AttemptContext };
import { LedgerBatch, isLedgerError, walletAccount, accountId, available, TRANSFERS, type LedgerTransfer } from '../ledger/index.ts';
import { PAYOUTS, type PayoutDoc } from '../payouts/model.ts';
import { custodyMoveOp } from '../payouts/custody.ts';
import type { WalletDoc } from '../wallets/model.ts';
import { encodeHeader } from '../x402/challenge.ts';
import { CHALLENGE_PAYMENTS } from '../x402/redeem.ts';
import { auditOp } from '../core/audit.ts';

export const AGENT_WALLET_STATES = 'agent_wallet_states';
export const POLICIES = 'agent_policies';
export const REFERENCES = 'spend_references';

export interface StoredPolicy {
  id: string;
  version_no: number;
  body: PolicyInput;
  created_at: string;
}
/** A spend whose outcome is still open (an on-chain execution): voided, it stops counting. */
export interface SpendEntry {
  attempt_id: string;
  transfer_id: string;
  rail: string;
  amount: string;
  at: string;
  final: boolean;
}
/** Settled spends of one rail and minute, summed: the state stays small however many spends a window holds. */
export interface SpendBucket {
  rail: string;
  minute: number;
  last_at: number;
  amount: string;
  count: number;
}

export interface AgentWalletState extends Doc {
  merchant_id: string;
  policy: StoredPolicy | null;
  spends: SpendEntry[];
  buckets?: SpendBucket[];
  updated_at: string;
}

interface Windowed {
  spends: SpendEntry[];
  buckets: SpendBucket[];
}

function fold(buckets: SpendBucket[], rail: string, amount: string, atMs: number): SpendBucket[] {
  const minute = atMs - (atMs % 60_000);
  const i = buckets.findIndex((b) => b.rail === rail && b.minute === minute);
  if (i < 0) return [...buckets, { rail, minute, last_at: atMs, amount, count: 1 }];
  const b = buckets[i];
  const next = { ...b, last_at: Math.max(b.last_at, atMs), amount: (BigInt(b.amount) + BigInt(amount)).toString(), count: b.count + 1 };
  return [...buckets.slice(0, i), next, ...buckets.slice(i + 1)];
}

export type AgentWalletMsg =
  | { type: 'set_policy'; wallet_id: string; merchant_id: string; policy_id: string; body: PolicyInput }
  | { type: 'attempt'; attempt_id: string; payout_id: string; input: AttemptInput; ctx: AttemptContext; dry_run: boolean }
  | { type: 'approve'; attempt_id: string; payout_id: string; ctx: AttemptContext }
  | { type: 'deny'; attempt_id: string; caller_merchant_id: string }
  | { type: 'execute'; attempt_id: string };

export interface AgentWalletReply {
  attempt?: SpendAttemptDoc;
  evaluation?: Evaluation;
  policy?: StoredPolicy;
  /** false when an attempt with this reference already existed */
  created?: boolean;
}

const parsed = new Map<string, Policy>();
function policyOf(p: StoredPolicy | null): Policy | null {
  if (!p) return null;
  let hit = parsed.get(p.id);
  if (!hit) {
    hit = parsePolicy(p.body);
    if (parsed.size > 5000) parsed.clear();
    parsed.set(p.id, hit);
  }
  return hit;
}

/** How far back the actor keeps spends: the policy's longest window (at least an hour, at most 30 days). */
const keepMs = (p: Policy | null) => Math.min(WINDOW_MAX_MS, Math.max(longestWindowMs(p), 3_600_000));

export const referenceId = (walletId: string, reference: string) =>
  `${walletId}:${createHash('sha256').update(reference).digest('hex').slice(0, 40)}`;

export function requestHash(input: AttemptInput): string {
  const { target, amount_subunits, token_symbol, chain, network, api_domain, reference, metadata } = input;
  return createHash('sha256')
    .update(JSON.stringify([target, amount_subunits, token_symbol, chain, network, api_domain, reference, metadata]))
    .digest('hex');
}

/** The X-Service-Payment value of an agent-wallet spend that pays an x402 challenge. */
export const agentProofHeader = (challengeId: string, walletId: string, attemptId: string) =>
  encodeHeader({
    x402Version: 1,
    scheme: 'agent_wallet',
    memo: challengeId,
    payload: { agent_wallet_id: walletId, spend_attempt_id: attemptId },
  });

export function makeAgentWalletBehavior(store: Store): ActorBehavior<AgentWalletState, AgentWalletMsg, AgentWalletReply> {
  /**
   * What the windows count now: buckets younger than the longest window, and in-flight chain spends
   * (a voided one is dropped, a posted one folded into its bucket).
   */
  async function liveSpends(state: AgentWalletState | null, now: Date): Promise<Windowed & { changed: boolean }> {
    const cutoff = now.getTime() - keepMs(policyOf(state?.policy ?? null));
    let changed = false;
    let buckets = (state?.buckets ?? []).filter((b) => b.last_at > cutoff);
    if (buckets.length !== (state?.buckets ?? []).length) changed = true;
    const spends: SpendEntry[] = [];
    for (const s of state?.spends ?? []) {
      const at = Date.parse(s.at);
      if (at <= cutoff) {
        changed = true;
        continue;
      }
      let final = s.final;
      if (!final) {
        const t = await store.get<LedgerTransfer>(TRANSFERS, s.transfer_id);
        if (!t || t.status === 'voided') {
          changed = true;
          continue;
        }
        final = t.status === 'posted';
      }
      if (final) {
        buckets = fold(buckets, s.rail, s.amount, at);
        changed = true;
      } else spends.push(s);
    }
    return { spends, buckets, changed };
  }

  /**
   * The spends of the wallet's last `keep` ms, rebuilt from its attempts and their ledger transfers (the
   * source of truth): a policy whose windows reach further back than the actor kept must count them all.
   */
  async function rebuild(walletId: string, now: Date, keep: number): Promise<Windowed> {
    const cutoff = now.getTime() - keep;
    // updated_at is never before the reservation (an approved attempt reserves after its creation)
    const rows = await store.find<SpendAttemptDoc>(ATTEMPTS, {
      agent_wallet_id: walletId,
      status: 'pending',
      updated_at: { $gt: new Date(cutoff).toISOString() },
    });
    let buckets: SpendBucket[] = [];
    const spends: SpendEntry[] = [];
    for (const a of rows) {
      const t = a.ledger_entry_id ? await store.get<LedgerTransfer>(TRANSFERS, a.ledger_entry_id) : null;
      if (!t || t.status === 'voided' || Date.parse(t.created_at) <= cutoff) continue;
      const e: SpendEntry = {
        attempt_id: a.id,
        transfer_id: t.id,
        rail: `${a.chain}:${a.network}:${a.token_symbol}`,
        amount: a.amount_subunits,
        at: t.created_at,
        final: false,
      };
      if (t.status === 'posted' || a.settlement?.execution !== 'chain') buckets = fold(buckets, e.rail, e.amount, Date.parse(e.at));
      else spends.push(e);
    }
    return { spends, buckets };
  }

  const counted = (w: Windowed): CountedSpend[] => [
    ...w.buckets.map((b) => ({ rail: b.rail, amount: BigInt(b.amount), at: b.last_at, count: b.count })),
    ...w.spends.map((s) => ({ rail: s.rail, amount: BigInt(s.amount), at: Date.parse(s.at) })),
  ];

  /** The window after an allowed attempt: folded at once when it settles in the ledger, tracked when on chain. */
  const add = (w: Windowed, e: SpendEntry): Windowed =>
    e.final ? { ...w, buckets: fold(w.buckets, e.rail, e.amount, Date.parse(e.at)) } : { ...w, spends: [...w.spends, e] };

  function decide(
    state: AgentWalletState | null,
    w: Windowed,
    input: AttemptInput,
    ctx: AttemptContext,
    now: Date,
    approving: boolean,
  ): Evaluation {
    return evaluate({
      caller_merchant_id: ctx.caller_merchant_id,
      merchant: ctx.merchant,
      wallet: ctx.wallet,
      rail_enabled: ctx.rail_enabled,
      attempt: {
        chain: input.chain,
        network: input.network,
        token: input.token_symbol,
        target: input.target,
        amount: BigInt(input.amount_subunits),
        api_domain: input.api_domain ?? undefined,
      },
      policy: policyOf(state?.policy ?? null),
      spends: counted(w),
      now,
      approving,
    });
  }

  /**
   * The ledger (and payout) writes of an allowed attempt. The agent's on-chain money is used first, then
   * its simulated (sandbox) money; simulated money never leaves on chain.
   */
  async function reserve(
    a: SpendAttemptDoc,
    payoutId: string,
    now: Date,
  ): Promise<{ ops: WriteOp[]; a: SpendAttemptDoc; entry: SpendEntry } | { insufficient: true }> {
    const asset = `${a.chain}:${a.network}:${a.token_symbol}`;
    const amount = BigInt(a.amount_subunits);
    const b = new LedgerBatch(store, now);
    const real = await b.account(walletAccount(a.agent_wallet_id, asset));
    const sim = await b.account(walletAccount(a.agent_wallet_id, asset, true));
    const simulated = available(real) < amount;
    if (simulated && available(sim) < amount) return { insufficient: true };
    const execution: Execution = a.target_kind === 'chain' ? (simulated ? 'simulated' : 'chain') : 'ledger';
    const transferId = execution === 'chain' ? payoutId : a.id;
    const credit =
      a.target_kind === 'chain'
        ? accountId(simulated ? 'sys:simulated' : 'sys:payouts', asset)
        : walletAccount(a.target_wallet_id!, asset, simulated);
    try {
      await b.transfer({
        id: transferId,
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
      if (isLedgerError(e, 'insufficient_funds')) return { insufficient: true };
      throw e;
    }
    const ops = b.ops();
    const at = now.toISOString();
    const next: SpendAttemptDoc = {
      ...a,
      status: 'pending',
      reason: null,
      ledger_entry_id: transferId,
      updated_at: at,
      settlement:
        execution === 'chain'
          ? { status: 'submitted', execution, payout_id: payoutId, tx_hash: null, settled_at: null }
          : { status: 'awaiting_execution', execution, settled_at: null },
      // the request executes it at once; the scanner only picks up one a crash interrupted
      execute_due_at: execution === 'chain' ? null : new Date(now.getTime() + 10_000).toISOString(),
      spend_reference: a.target_kind === 'x402' ? agentProofHeader(a.challenge_id!, a.agent_wallet_id, a.id) : a.spend_reference,
    };
    if (execution === 'chain') {
      const payout: PayoutDoc = {
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
      ops.push({ op: 'insert', coll: PAYOUTS, doc: payout });
    }
    // one payment per challenge: of two wallets (or a wallet and an on-chain proof in flight) paying it at
    // once, the insert lets one through
    if (a.target_kind === 'x402')
      ops.push({
        op: 'insert',
        coll: CHALLENGE_PAYMENTS,
        doc: { id: a.challenge_id!, attempt_id: a.id, agent_wallet_id: a.agent_wallet_id, created_at: at },
      });
    return {
      ops,
      a: next,
      entry: { attempt_id: a.id, transfer_id: transferId, rail: asset, amount: a.amount_subunits, at, final: execution !== 'chain' },
    };
  }

  /** An x402 payment that would buy nothing: its challenge is closed, or another attempt or an on-chain proof has paid it. */
  async function challengeClosed(a: SpendAttemptDoc, target: AttemptContext['target']): Promise<boolean> {
    if (a.target_kind !== 'x402') return false;
    if (target.kind !== 'x402' || target.closed) return true;
    const paid = await store.get<Doc & { attempt_id: string }>(CHALLENGE_PAYMENTS, a.challenge_id!);
    return !!paid && paid.attempt_id !== a.id;
  }

  function nextState(state: AgentWalletState | null, merchantId: string, w: Windowed, at: string): AgentWalletState {
    return {
      id: state?.id ?? '',
      merchant_id: state?.merchant_id ?? merchantId,
      policy: state?.policy ?? null,
      spends: w.spends,
      buckets: w.buckets,
      updated_at: at,
      ...(state?.version !== undefined ? { version: state.version } : {}),
    };
  }

  async function handle(
    state: AgentWalletState | null,
    msg: AgentWalletMsg,
    now: Date,
  ): Promise<Decision<AgentWalletState, AgentWalletReply>> {
    const at = now.toISOString();
    switch (msg.type) {
      case 'set_policy': {
        const parsedPolicy = parsePolicy(msg.body);
        const policy: StoredPolicy = {
          id: msg.policy_id,
          version_no: (state?.policy?.version_no ?? 0) + 1,
          body: presentPolicyBody(parsedPolicy),
          created_at: at,
        };
        // windows reaching further back than the actor kept: count what it had let go
        const window =
          keepMs(parsedPolicy) > keepMs(policyOf(state?.policy ?? null))
            ? await rebuild(msg.wallet_id, now, keepMs(parsedPolicy))
            : { spends: state?.spends ?? [], buckets: state?.buckets ?? [] };
        const next = { ...nextState(state, msg.merchant_id, window, at), policy };
        return {
          state: next,
          effects: [
            { op: 'insert', coll: POLICIES, doc: { ...policy, agent_wallet_id: msg.wallet_id, merchant_id: msg.merchant_id } },
            // a policy change is audited with the change
            auditOp(
              'agent_wallet.policy.set',
              { merchant_id: msg.merchant_id, agent_wallet_id: msg.wallet_id, policy_id: policy.id, version_no: policy.version_no },
              at,
            ),
          ],
          reply: { policy },
        };
      }
      case 'attempt': {
        const { input, ctx } = msg;
        const hash = requestHash(input);
        // a reference is the owner's idempotency key: another merchant's (always denied) attempt neither
        // reads the owner's attempt through it nor takes it first
        const owned = ctx.wallet.merchant_id === ctx.caller_merchant_id;
        const refId = input.reference !== null && owned ? referenceId(ctx.wallet.id, input.reference) : null;
        if (refId && !msg.dry_run) {
          const ref = await store.get<{ id: string; attempt_id: string; request_hash: string }>(REFERENCES, refId);
          if (ref) {
            if (ref.request_hash !== hash) throw conflict(IDEMPOTENCY_MISMATCH, { remediation: REMEDIATION.idempotency });
            const existing = await store.get<SpendAttemptDoc>(ATTEMPTS, ref.attempt_id);
            if (existing) return { reply: { attempt: existing, created: false } };
          }
        }
        const { changed, ...window } = await liveSpends(state, now);
        const evaluation = decide(state, window, input, ctx, now, false);
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
        const effects: WriteOp[] = [];
        let doc = base;
        let nextWindow = window;
        if (evaluation.status === 'pending' && (await challengeClosed(base, ctx.target)))
          doc = { ...base, status: 'denied', reason: 'challenge_closed' };
        if (doc.status === 'pending') {
          const r = await reserve(base, msg.payout_id, now);
          if ('insufficient' in r) doc = { ...base, status: 'denied', reason: 'insufficient_funds' };
          else {
            doc = r.a;
            effects.push(...r.ops);
            nextWindow = add(window, r.entry);
          }
        }
        effects.unshift({ op: 'insert', coll: ATTEMPTS, doc });
        if (refId)
          effects.push({ op: 'insert', coll: REFERENCES, doc: { id: refId, attempt_id: doc.id, request_hash: hash, created_at: at } });
        const touched = doc.status === 'pending' || changed;
        return {
          ...(touched && state ? { state: nextState(state, ctx.caller_merchant_id, nextWindow, at) } : {}),
          effects,
          reply: { attempt: doc, evaluation, created: true },
        };
      }
      case 'approve': {
        const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
        if (!a || a.merchant_id !== msg.ctx.caller_merchant_id || a.agent_wallet_id !== msg.ctx.wallet.id) throw notFound('spend attempt');
        if (a.status !== 'approval_required')
          throw conflict(`spend attempt ${a.id} is ${a.status}; only an attempt awaiting approval can be approved`);
        const { changed: _, ...window } = await liveSpends(state, now);
        const evaluation = decide(state, window, a, msg.ctx, now, true);
        let doc: SpendAttemptDoc = {
          ...a,
          status: evaluation.status,
          reason: evaluation.reason ?? null,
          policy_id: state?.policy?.id ?? a.policy_id,
          updated_at: at,
        };
        const effects: WriteOp[] = [];
        let nextWindow = window;
        // the x402 challenge expired, was redeemed or paid meanwhile: approving now would pay for nothing
        if (evaluation.status === 'pending' && (await challengeClosed(a, msg.ctx.target)))
          doc = { ...doc, status: 'denied', reason: 'challenge_closed' };
        if (doc.status === 'pending') {
          const r = await reserve(doc, msg.payout_id, now);
          if ('insufficient' in r) doc = { ...doc, status: 'denied', reason: 'insufficient_funds' };
          else {
            doc = r.a;
            effects.push(...r.ops);
            nextWindow = add(window, r.entry);
          }
        }
        effects.unshift({ op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 });
        effects.push(
          auditOp(
            'agent_wallet.spend.approved',
            {
              merchant_id: a.merchant_id,
              agent_wallet_id: a.agent_wallet_id,
              spend_attempt_id: a.id,
              status: doc.status,
              reason: doc.reason,
            },
            at,
          ),
        );
        return {
          ...(doc.status === 'pending' && state ? { state: nextState(state, a.merchant_id, nextWindow, at) } : {}),
          effects,
          reply: { attempt: doc, evaluation },
        };
      }
      case 'deny': {
        const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
        if (!a || a.merchant_id !== msg.caller_merchant_id || a.agent_wallet_id !== (state?.id ?? a.agent_wallet_id))
          throw notFound('spend attempt');
        if (a.status === 'denied') return { reply: { attempt: a } };
        if (a.status !== 'approval_required')
          throw conflict(`spend attempt ${a.id} is ${a.status}; only an attempt awaiting approval can be denied`);
        const doc: SpendAttemptDoc = { ...a, status: 'denied', reason: 'denied_by_merchant', updated_at: at };
        return {
          effects: [
            { op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 },
            auditOp(
              'agent_wallet.spend.denied',
              { merchant_id: a.merchant_id, agent_wallet_id: a.agent_wallet_id, spend_attempt_id: a.id },
              at,
            ),
          ],
          reply: { attempt: doc },
        };
      }
      case 'execute': {
        const a = await store.get<SpendAttemptDoc>(ATTEMPTS, msg.attempt_id);
        if (!a) throw notFound('spend attempt');
        if (a.status !== 'pending' || !a.settlement || a.settlement.status !== 'awaiting_execution') return { reply: { attempt: a } };
        const b = new LedgerBatch(store, now);
        await b.post(a.ledger_entry_id!);
        const doc: SpendAttemptDoc = {
          ...a,
          settlement: { ...a.settlement, status: 'settled', settled_at: at },
          execute_due_at: null,
          updated_at: at,
        };
        const effects: WriteOp[] = [{ op: 'cas', coll: ATTEMPTS, doc, expected: a.version ?? 0 }, ...b.ops()];
        // real money that moved to another of our wallets: its tokens follow on chain (lib/payouts/custody.ts)
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
      }
    }
  }

  return {
    collection: AGENT_WALLET_STATES,
    // another wallet's actor created the account or paid the challenge first: decide again
    retryDuplicatesIn: ['ledger_accounts', 'wallet_transactions', CHALLENGE_PAYMENTS],
    async handle(state, msg, now) {
      try {
        return await handle(state, msg, now);
      } catch (e) {
        if (isLedgerError(e)) throw new ServiceError(409, e.message, 'CONFLICT');
        throw e;
      }
    },
  };
}
