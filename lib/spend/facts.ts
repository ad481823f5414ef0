/**
 * The facts a spend decision needs, found before the agent-wallet actor decides (reads only, never writes):
 * the checked request, what its target is, the merchant's standing; and how an attempt, a page of attempts
 * and a policy are shown. No broker here; the store and clock come from the caller.
 */
import { getAddress } from 'ethers';
import { PublicKey } from '@solana/web3.js';
import type { Doc, Store } from '../store/port.ts';
import { REMEDIATION, badRequest, notFound } from '../core/errors.ts';
import type { CallingMerchant } from '../merchants/caller.ts';
import { validate } from '../http/validation.ts';
import { AmountError, toSubunits } from '../core/money.ts';
import { findRail, type Rail } from '../../config/rails.ts';
import type { AbuseLabels, AbuseOutcome } from '../runtime/metrics.ts';
import { knownChallenge } from '../x402/known.ts';
import { PAYOUTS, type PayoutDoc } from '../payouts/model.ts';
import { LIMIT_VIOLATIONS, parsePolicy, PolicyError, sameTarget, type PolicyInput, type Reason } from './policy.ts';
import { ATTEMPTS, presentAttempt, type AttemptContext, type AttemptInput, type SpendAttemptDoc, type WalletFacts } from './attempts.ts';
import type { Checked } from '../http/contract.ts';

/** The spend-attempt request after ajv (AgentSpendAttemptRequest: closed schema). */
export type AttemptBody = Checked<'AgentSpendAttemptRequest'>;

/** entries a fact cache keeps at most (dropped all at once past it: a bound, not an LRU) */
const CACHE_MAX = 10_000;
const remember = <K, V>(m: Map<K, V>, k: K, v: V): V => {
  if (m.size >= CACHE_MAX) m.clear();
  m.set(k, v);
  return v;
};
/** per store: facts that never change once written (a wallet is inserted, never updated or deleted) */
const walletsById = new WeakMap<Store, Map<string, WalletFacts>>();
const walletsByAddress = new WeakMap<Store, Map<string, WalletFacts>>();
const cacheOf = (caches: WeakMap<Store, Map<string, WalletFacts>>, store: Store) =>
  caches.get(store) ?? (caches.set(store, new Map()), caches.get(store)!);
/** checksumming hashes the address (keccak): a target paid often is checksummed once */
const canonical = new Map<string, string | null>();

/** A target in its canonical form (checksummed hex, exact base58), or null when it is not an address of the chain. */
export function normalizeAddress(chain: string, target: string): string | null {
  const key = `${chain}:${target}`;
  const hit = canonical.get(key);
  return hit !== undefined ? hit : remember(canonical, key, toCanonical(chain, target));
}

function toCanonical(chain: string, target: string): string | null {
  try {
    if (chain === 'ethereum') return getAddress(target);
    if (chain === 'solana') return new PublicKey(target).toBase58() === target ? target : null;
  } catch {
    /* not an address */
  }
  return null;
}

/**
 * The request as the actor takes it. The rail is looked up among the enabled rails, then among every rail
 * the service knows (a known but disabled rail is decided as `rail_not_enabled`, not refused as bad input).
 * amount and amount_subunits must agree in the token's decimals.
 */
export function attemptInput(b: AttemptBody, enabled: Rail[], known: Rail[]): { input: AttemptInput; railEnabled: boolean } {
  const on = findRail(enabled, b.chain, b.network, b.token_symbol);
  const rail = on ?? findRail(known, b.chain, b.network, b.token_symbol);
  if (!rail)
    throw badRequest(`(${b.chain}, ${b.network}, ${b.token_symbol}) is not a rail of this service; see GET /v1/payment_methods`, {
      field: 'chain',
      remediation: REMEDIATION.rails,
    });
  let fromAmount: bigint;
  try {
    fromAmount = toSubunits(b.amount, rail.decimals);
  } catch (e) {
    if (e instanceof AmountError)
      throw badRequest(`amount has more decimal places than ${rail.token} allows (${rail.decimals})`, {
        field: 'amount',
        remediation: `Round amount to ${rail.decimals} decimal places.`,
      });
    throw e;
  }
  if (!/^[1-9]\d{0,77}$/.test(b.amount_subunits))
    throw badRequest('amount_subunits must be a positive integer of smallest units, as a digit string without leading zeros', {
      field: 'amount_subunits',
    });
  if (fromAmount !== BigInt(b.amount_subunits))
    throw badRequest(`amount and amount_subunits disagree: ${b.amount} ${rail.token} is ${fromAmount} smallest units`, {
      field: 'amount_subunits',
      remediation: `Send amount_subunits ${fromAmount} for amount ${b.amount}, or correct amount.`,
    });
  return {
    railEnabled: !!on,
    input: {
      target: b.target,
      amount_subunits: b.amount_subunits,
      decimals: rail.decimals,
      token_symbol: b.token_symbol,
      chain: b.chain,
      network: b.network,
      api_domain: b.api_domain ?? null,
      reference: b.reference ?? null,
      metadata: b.metadata ?? null,
    },
  };
}

/**
 * What the target is: an x402 challenge's payTo (reference = its memo; `closed` once it expired or was
 * redeemed on chain, so that paying it is refused rather than made a plain transfer), one of our wallets,
 * or an address on chain. A payment of the challenge (a redemption, an EIP-3009 or Solana proof being
 * settled, another attempt) is its payment row (x402 CHALLENGE_PAYMENTS), read in the agent-wallet actor's
 * turn; a proof that starts settling after that read still cannot pay too: both insert the row, and the
 * actor decides again when it lost.
 */
export async function resolveTarget(store: Store, now: Date, input: AttemptInput, wallet: WalletFacts): Promise<AttemptContext['target']> {
  if (input.reference) {
    const c = await knownChallenge(store, input.reference);
    if (c && c.chain === input.chain && c.network === input.network && sameTarget(c.chain, c.pay_to, input.target)) {
      if (c.token !== input.token_symbol || c.amount_subunits !== input.amount_subunits) {
        throw badRequest(
          `x402 challenge ${c.id} asks for ${c.amount_subunits} smallest units of ${c.token}; the attempt must pay exactly that`,
          {
            field: 'amount_subunits',
            remediation: `Send amount_subunits ${c.amount_subunits} and token_symbol ${c.token}, as the challenge asks.`,
          },
        );
      }
      // expired or redeemed; a payment of the challenge (another attempt's, or an on-chain proof's being
      // settled, which every redemption writes) is read where it is decided: the wallet actor's turn
      // (lib/agents/reserve.ts challengeClosed), which refuses any payment row but the attempt's own
      const open = c.status === 'open' && c.expires_at > now.toISOString();
      return { kind: 'x402', wallet_id: c.wallet_id, challenge_id: c.id, ...(open ? {} : { closed: true }) };
    }
  }
  const address = normalizeAddress(input.chain, input.target);
  if (!address) throw badRequest(`target is not a valid ${input.chain} address`, { field: 'target' });
  const own = await walletAt(store, address, input.chain, input.network);
  if (own) {
    if (own.id === wallet.id)
      throw badRequest('an agent wallet cannot spend to itself', {
        field: 'target',
        remediation: "Send target as an address other than this agent wallet's own.",
      });
    return { kind: 'wallet', wallet_id: own.id, challenge_id: null };
  }
  return { kind: 'chain', wallet_id: null, challenge_id: null };
}

/** Our wallet at an address, if any (one found is remembered: an address never changes hands). */
async function walletAt(store: Store, address: string, chain: string, network: string): Promise<WalletFacts | null> {
  const cache = cacheOf(walletsByAddress, store);
  const key = `${chain}:${network}:${address}`;
  const hit = cache.get(key);
  if (hit) return factsOf(hit); // each caller its own copy
  const w = await store.findOne<WalletFacts & Doc>('wallets', { address, chain, network });
  return w ? factsOf(remember(cache, key, factsOf(w))) : null;
}

const factsOf = (w: WalletFacts): WalletFacts => ({
  id: w.id,
  merchant_id: w.merchant_id,
  type: w.type,
  chain: w.chain,
  network: w.network,
  address: w.address,
});

/**
 * Everything the rules need besides the actor's own state: caller, merchant standing, wallet, rail, target.
 * The calling merchant comes with its standing (`withStanding`, lib/merchants/caller.ts): read once, by the
 * gateway, for the request.
 */
export async function attemptContext(
  store: Store,
  now: Date,
  merchant: Pick<CallingMerchant, 'id' | 'sandbox' | 'kyc_status'>,
  wallet: WalletFacts,
  input: AttemptInput,
  railEnabled: boolean,
  payoutLimits?: AttemptContext['payout_limits'],
): Promise<AttemptContext> {
  return {
    caller_merchant_id: merchant.id,
    merchant: { sandbox: merchant.sandbox, kyc_verified: merchant.kyc_status === 'verified' },
    wallet,
    rail_enabled: railEnabled,
    target: await resolveTarget(store, now, input, wallet),
    ...(payoutLimits ? { payout_limits: payoutLimits } : {}),
  };
}

/** A policy body after ajv, checked beyond its schema (rail keys, durations, amounts): a 400 otherwise. */
export function checkedPolicy(body: PolicyInput): PolicyInput {
  try {
    parsePolicy(body);
  } catch (e) {
    if (e instanceof PolicyError) throw badRequest(e.message, { field: e.field });
    throw e;
  }
  return body;
}

/** The wallet behind a path id (any merchant's: the ownership rule decides an attempt on another's). */
export async function walletFacts(store: Store, id: string): Promise<WalletFacts> {
  const cache = cacheOf(walletsById, store);
  const hit = cache.get(id);
  if (hit) return factsOf(hit); // each caller its own copy
  const w = await store.get<WalletFacts & Doc>('wallets', id);
  if (!w) throw notFound('agent wallet');
  return factsOf(remember(cache, id, factsOf(w)));
}

/** One attempt of the wallet, recorded for the caller; anything else is a 404. */
export async function attemptOf(store: Store, wallet: WalletFacts, attemptId: string, callerMerchantId: string): Promise<SpendAttemptDoc> {
  const a = await store.get<SpendAttemptDoc>(ATTEMPTS, attemptId);
  if (!a || a.agent_wallet_id !== wallet.id || a.merchant_id !== callerMerchantId) throw notFound('spend attempt');
  return a;
}

const OUTCOME: Partial<Record<Reason, AbuseOutcome>> = {
  sandbox_mainnet_not_allowed: 'mainnet_kyc_required',
  kyc_required: 'mainnet_kyc_required',
  policy_mainnet_not_allowed: 'mainnet_kyc_required',
  per_attempt_cap_exceeded: 'amount_limit_exceeded',
  window_amount_exceeded: 'daily_volume_limit_exceeded',
  window_count_exceeded: 'daily_volume_limit_exceeded',
};

/** The abuse_signal_total labels of a cap breach or a gated mainnet attempt; null for any other outcome. */
export function limitViolationLabels(a: SpendAttemptDoc, sandbox: boolean): (AbuseLabels & { signal: 'limit_violation' }) | null {
  const outcome = a.reason ? OUTCOME[a.reason as Reason] : undefined;
  if (!outcome || !LIMIT_VIOLATIONS.has(a.reason as Reason)) return null;
  return {
    signal: 'limit_violation',
    outcome,
    environment: sandbox ? 'sandbox' : 'live',
    chain: (['ethereum', 'solana'].includes(a.chain) ? a.chain : '') as 'ethereum' | '',
    network: (['testnet', 'mainnet'].includes(a.network) ? a.network : '') as 'testnet' | '',
    token: (['USDC', 'ETH', 'SOL'].includes(a.token_symbol) ? a.token_symbol : '') as 'USDC' | '',
  };
}

/** An on-chain attempt shows its payout's progress under `settlement`. */
export async function withPayout(store: Store, a: SpendAttemptDoc): Promise<SpendAttemptDoc> {
  const s = a.settlement;
  if (!s || s.execution !== 'chain' || !s.payout_id) return a;
  const p = await store.get<PayoutDoc>(PAYOUTS, s.payout_id);
  if (!p) return a;
  const status = p.status === 'completed' ? 'settled' : p.status === 'failed' ? 'failed' : 'submitted';
  return { ...a, settlement: { ...s, status, tx_hash: p.tx_hash, settled_at: p.completed_at, failure_reason: p.failure_reason } };
}

/** The API view of an attempt, with its payout's progress. */
export const showAttempt = async (store: Store, a: SpendAttemptDoc) => presentAttempt(await withPayout(store, a));

/** A page of the wallet's attempts, newest first (`?status=&limit=&cursor=`). */
export async function listAttempts(store: Store, wallet: WalletFacts, rawQuery: unknown) {
  // validated: a repeated or bracketed parameter arrives as an array or object and must not reach the store
  const q = validate('AgentSpendAttemptListQuery', rawQuery ?? {}, 'query');
  const limit = q.limit === undefined ? 20 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer from 1 to 100', { field: 'limit' });
  const filter: Record<string, unknown> = { agent_wallet_id: wallet.id, merchant_id: wallet.merchant_id };
  if (q.status) filter.status = q.status;
  if (q.cursor) filter.id = { $lt: q.cursor };
  const rows = await store.find<SpendAttemptDoc>(ATTEMPTS, filter as never, { sort: 'id', desc: true, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const has_more = rows.length > limit;
  return {
    data: await Promise.all(page.map((a) => showAttempt(store, a))),
    has_more,
    next_cursor: has_more ? page[page.length - 1].id : null,
  };
}
