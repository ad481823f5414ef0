/**
 * The rolling windows an agent wallet's caps are counted over: which spends still count, how they are
 * rebuilt from the ledger when a policy reaches further back than the actor kept, and the policy's verdict
 * on an attempt against them.
 */
import type { Store } from '../store/port.ts';
import { evaluate, parsePolicy, longestWindowMs, WINDOW_MAX_MS, type Evaluation, type Policy, type SpendSums } from '../spend/policy.ts';
import { ATTEMPTS, type SpendAttemptDoc, type AttemptInput, type AttemptContext } from '../spend/attempts.ts';
import { TRANSFERS, type LedgerTransfer } from '../ledger/index.ts';
import type { AgentWalletState, SpendBucket, SpendEntry, StoredPolicy, Windowed } from './state.ts';
import { bucketSum, carryIndex, earliestBucket } from './bucket-index.ts';

/** `buckets` with a spend of `amount` at `atMs` folded into its rail's bucket of that minute (a new array) */
export function fold(buckets: SpendBucket[], rail: string, amount: string, atMs: number): SpendBucket[] {
  const minute = atMs - (atMs % 60_000);
  // the bucket of a spend made now is the last one, nearly always: searched from the end
  let i = buckets.length - 1;
  while (i >= 0 && !(buckets[i].minute === minute && buckets[i].rail === rail)) i--;
  if (i < 0) {
    const created: SpendBucket = { rail, minute, last_at: atMs, amount, count: 1 };
    const out = [...buckets, created];
    carryIndex(buckets, out, null, created);
    return out;
  }
  const b = buckets[i];
  const next = { ...b, last_at: Math.max(b.last_at, atMs), amount: (BigInt(b.amount) + BigInt(amount)).toString(), count: b.count + 1 };
  const out = buckets.slice();
  out[i] = next;
  carryIndex(buckets, out, b, next);
  return out;
}

const parsed = new Map<string, Policy>();
/** The stored policy, parsed once per policy id (a policy version never changes). */
export function policyOf(p: StoredPolicy | null): Policy | null {
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
export const keepMs = (p: Policy | null) => Math.min(WINDOW_MAX_MS, Math.max(longestWindowMs(p), 3_600_000));

/**
 * What the windows count now: buckets younger than the longest window, and in-flight chain spends
 * (a voided one is dropped, a posted one folded into its bucket).
 */
export async function liveSpends(store: Store, state: AgentWalletState | null, now: Date): Promise<Windowed & { changed: boolean }> {
  const cutoff = now.getTime() - keepMs(policyOf(state?.policy ?? null));
  let changed = false;
  const kept = state?.buckets ?? [];
  // the same array while no bucket has left (its index goes with it): filtered about once a minute
  let buckets = earliestBucket(kept) > cutoff ? kept : kept.filter((b) => b.last_at > cutoff);
  if (buckets !== kept) changed = true;
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
export async function rebuild(store: Store, walletId: string, now: Date, keep: number): Promise<Windowed> {
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

/** What the windows count, summed between two times: the buckets through their index, in-flight chain spends one by one. */
export const windowSums = (w: Windowed): SpendSums => ({
  sum(rail, from, to) {
    let { amount, count } = bucketSum(w.buckets, rail, from, to);
    for (const s of w.spends) {
      if (s.rail !== rail) continue;
      const at = Date.parse(s.at);
      if (at > from && at <= to) {
        amount += BigInt(s.amount);
        count++;
      }
    }
    return { amount, count };
  },
});

/** The window after an allowed attempt: folded at once when it settles in the ledger, tracked when on chain. */
export const add = (w: Windowed, e: SpendEntry): Windowed =>
  e.final ? { ...w, buckets: fold(w.buckets, e.rail, e.amount, Date.parse(e.at)) } : { ...w, spends: [...w.spends, e] };

/** The policy's verdict on an attempt against the windows (`approving`: a merchant's approval re-checks the caps). */
export function evaluateAttempt(
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
    spends: windowSums(w),
    now,
    approving,
  });
}
