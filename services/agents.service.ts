/**
 * Agent wallets (facade): spend policies and spend attempts. Validates, finds out the facts (merchant,
 * wallet, rail, what the target is), and asks the wallet's actor (`agent-wallet-actors`), which decides
 * and writes. Runs the scanner that finishes ledger executions a crash interrupted.
 */
import type { Context, ServiceSchema } from 'moleculer';
import { getAddress } from 'ethers';
import { PublicKey } from '@solana/web3.js';
import type { Runtime } from '../lib/runtime.ts';
import type { Doc } from '../lib/store/port.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/validation.ts';
import { badRequest, notFound, unauthorized } from '../lib/core/errors.ts';
import { newId } from '../lib/core/ids.ts';
import { AmountError, toSubunits } from '../lib/core/money.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { findRail } from '../config/rails.ts';
import { knownRails } from '../lib/catalog/rules.ts';
import type { AbuseOutcome } from '../lib/metrics.ts';
import { LIMIT_VIOLATIONS, parsePolicy, PolicyError, sameTarget, type PolicyInput, type Reason } from '../lib/spend/policy.ts';
import { ATTEMPTS, presentAttempt, type SpendAttemptDoc } from '../lib/spend/attempts.ts';
import { CHALLENGES, type ChallengeDoc } from '../lib/x402/redeem.ts';
import type { AgentWalletMsg, AgentWalletReply, AttemptContext, AttemptInput, StoredPolicy, AgentWalletState, WalletFacts } from '../actors/agent-wallet.ts';
import { AGENT_WALLET_STATES } from '../actors/agent-wallet.ts';
import { limitViolation } from '../lib/ops/alerts/index.ts';

type Http = { body?: unknown; query?: Record<string, string | undefined>; params?: Record<string, string | undefined> };
interface AttemptBody {
  target: string; amount: number; amount_subunits: string; token_symbol: string; chain: string; network: string;
  api_domain?: string; reference?: string; metadata?: Record<string, unknown>;
}

const OUTCOME: Partial<Record<Reason, AbuseOutcome>> = {
  sandbox_mainnet_not_allowed: 'mainnet_kyc_required', kyc_required: 'mainnet_kyc_required', policy_mainnet_not_allowed: 'mainnet_kyc_required',
  per_attempt_cap_exceeded: 'amount_limit_exceeded', window_amount_exceeded: 'daily_volume_limit_exceeded', window_count_exceeded: 'daily_volume_limit_exceeded',
};

export function createAgentsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const known = knownRails();
  let scanner: DueScanner<SpendAttemptDoc> | null = null;

  const send = (ctx: Pick<Context, 'call'>, id: string, msg: AgentWalletMsg) => ctx.call('agent-wallet-actors.send', { id, msg }) as Promise<AgentWalletReply>;

  function merchantOf(ctx: Context): string {
    const user = requestMeta(ctx).user;
    if (user?.kind !== 'merchant') throw unauthorized();
    return user.merchant_id;
  }

  async function walletOf(ctx: Context<Http>): Promise<WalletFacts> {
    const id = ctx.params.params?.agent_wallet_id ?? '';
    const w = await store.get<WalletFacts & Doc>('wallets', id);
    if (!w) throw notFound('agent wallet');
    return { id: w.id, merchant_id: w.merchant_id, type: w.type, chain: w.chain, network: w.network, address: w.address };
  }

  /** A wallet the caller owns, for policy and attempt reads (another merchant's is a 404 like an unknown one). */
  async function ownWallet(ctx: Context<Http>): Promise<WalletFacts> {
    const w = await walletOf(ctx);
    if (w.merchant_id !== merchantOf(ctx)) throw notFound('agent wallet');
    return w;
  }

  function normalizeAddress(chain: string, target: string): string | null {
    try {
      if (chain === 'ethereum') return getAddress(target);
      if (chain === 'solana') return new PublicKey(target).toBase58() === target ? target : null;
    } catch { /* not an address */ }
    return null;
  }

  async function readInput(ctx: Context<Http>): Promise<{ input: AttemptInput; railEnabled: boolean }> {
    const b = validate<AttemptBody>('AgentSpendAttemptRequest', ctx.params.body);
    const rail = findRail(config.rails, b.chain, b.network, b.token_symbol) ?? findRail(known, b.chain, b.network, b.token_symbol);
    if (!rail) throw badRequest(`(${b.chain}, ${b.network}, ${b.token_symbol}) is not a rail of this service; see GET /v1/payment_methods`);
    let fromAmount: bigint;
    try {
      fromAmount = toSubunits(b.amount, rail.decimals);
    } catch (e) {
      if (e instanceof AmountError) throw badRequest(`amount has more decimal places than ${rail.token} allows (${rail.decimals})`);
      throw e;
    }
    if (!/^[1-9]\d{0,77}$/.test(b.amount_subunits)) throw badRequest('amount_subunits must be a positive integer of smallest units, as a digit string without leading zeros');
    if (fromAmount !== BigInt(b.amount_subunits)) throw badRequest(`amount and amount_subunits disagree: ${b.amount} ${rail.token} is ${fromAmount} smallest units`);
    return {
      railEnabled: !!findRail(config.rails, b.chain, b.network, b.token_symbol),
      input: {
        target: b.target, amount_subunits: b.amount_subunits, decimals: rail.decimals, token_symbol: b.token_symbol, chain: b.chain, network: b.network,
        api_domain: b.api_domain ?? null, reference: b.reference ?? null, metadata: b.metadata ?? null,
      },
    };
  }

  /** What the target is: an x402 challenge's payTo (reference = its memo), one of our wallets, or an address on chain. */
  async function resolveTarget(input: AttemptInput, wallet: WalletFacts): Promise<AttemptContext['target']> {
    if (input.reference) {
      const c = await store.get<ChallengeDoc>(CHALLENGES, input.reference);
      if (c && c.status === 'open' && c.expires_at > rt.now().toISOString() && c.chain === input.chain && c.network === input.network
        && c.token === input.token_symbol && sameTarget(c.chain, c.pay_to, input.target) && c.amount_subunits === input.amount_subunits) {
        return { kind: 'x402', wallet_id: c.wallet_id, challenge_id: c.id };
      }
    }
    const address = normalizeAddress(input.chain, input.target);
    if (!address) throw badRequest(`target is not a valid ${input.chain} address`);
    const own = await store.findOne<WalletFacts & Doc>('wallets', { address, chain: input.chain, network: input.network });
    if (own) {
      if (own.id === wallet.id) throw badRequest('an agent wallet cannot spend to itself');
      return { kind: 'wallet', wallet_id: own.id, challenge_id: null };
    }
    return { kind: 'chain', wallet_id: null, challenge_id: null };
  }

  async function contextFor(ctx: Context<Http>, wallet: WalletFacts, input: AttemptInput, railEnabled: boolean): Promise<AttemptContext> {
    const caller = merchantOf(ctx);
    const merchant = await store.get<{ id: string; sandbox: boolean; kyc_status?: string }>('merchants', caller);
    if (!merchant) throw unauthorized();
    return {
      caller_merchant_id: caller,
      merchant: { sandbox: merchant.sandbox, kyc_verified: merchant.kyc_status === 'verified' },
      wallet, rail_enabled: railEnabled, target: await resolveTarget(input, wallet),
    };
  }

  function signal(ctx: Context, a: SpendAttemptDoc) {
    const outcome = a.reason ? OUTCOME[a.reason as Reason] : undefined;
    if (!outcome || !LIMIT_VIOLATIONS.has(a.reason as Reason)) return;
    const user = requestMeta(ctx).user;
    limitViolation(rt, {
      signal: 'limit_violation', outcome, environment: user?.kind === 'merchant' && user.sandbox ? 'sandbox' : 'live',
      chain: (['ethereum', 'solana'].includes(a.chain) ? a.chain : '') as 'ethereum' | '',
      network: (['testnet', 'mainnet'].includes(a.network) ? a.network : '') as 'testnet' | '',
      token: (['USDC', 'ETH', 'SOL'].includes(a.token_symbol) ? a.token_symbol : '') as 'USDC' | '',
    }, { merchant_id: user?.kind === 'merchant' ? user.merchant_id : null, ctx });
  }

  /** A ledger execution right after the decision (the scanner finishes it if this node dies first). */
  async function executeNow(ctx: Pick<Context, 'call'>, a: SpendAttemptDoc): Promise<SpendAttemptDoc> {
    if (a.status !== 'pending' || a.settlement?.status !== 'awaiting_execution') return a;
    return (await send(ctx, a.agent_wallet_id, { type: 'execute', attempt_id: a.id })).attempt ?? a;
  }

  function presentPolicy(walletId: string, p: StoredPolicy) {
    return { id: p.id, agent_wallet_id: walletId, version: p.version_no, ...p.body, created_at: p.created_at };
  }

  async function attemptOf(ctx: Context<Http>, wallet: WalletFacts): Promise<SpendAttemptDoc> {
    const a = await store.get<SpendAttemptDoc>(ATTEMPTS, ctx.params.params?.attempt_id ?? '');
    if (!a || a.agent_wallet_id !== wallet.id || a.merchant_id !== merchantOf(ctx)) throw notFound('spend attempt');
    return a;
  }

  /** An on-chain attempt shows its payout's progress. */
  async function withPayout(a: SpendAttemptDoc): Promise<SpendAttemptDoc> {
    const s = a.settlement;
    if (!s || s.execution !== 'chain' || !s.payout_id) return a;
    const p = await store.get<Doc & { status: string; tx_hash: string | null; completed_at: string | null; failure_reason: string | null }>('payouts', s.payout_id);
    if (!p) return a;
    const status = p.status === 'completed' ? 'settled' : p.status === 'failed' ? 'failed' : 'submitted';
    return { ...a, settlement: { ...s, status, tx_hash: p.tx_hash, settled_at: p.completed_at, failure_reason: p.failure_reason } };
  }

  return {
    name: 'agents',
    actions: {
      putPolicy: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          if (wallet.type !== 'agent') throw badRequest(`wallet ${wallet.id} is a ${wallet.type} wallet; spend policies belong to agent wallets`);
          const body = validate<PolicyInput>('AgentSpendPolicyRequest', ctx.params.body);
          try {
            parsePolicy(body);
          } catch (e) {
            if (e instanceof PolicyError) throw badRequest(e.message);
            throw e;
          }
          const reply = await send(ctx, wallet.id, { type: 'set_policy', wallet_id: wallet.id, merchant_id: wallet.merchant_id, policy_id: newId('pol'), body });
          return presentPolicy(wallet.id, reply.policy!);
        },
      },
      getPolicy: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          const state = await store.get<AgentWalletState>(AGENT_WALLET_STATES, wallet.id);
          if (!state?.policy) throw notFound('policy');
          return presentPolicy(wallet.id, state.policy);
        },
      },
      createAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await walletOf(ctx);
          const { input, railEnabled } = await readInput(ctx);
          const actx = await contextFor(ctx, wallet, input, railEnabled);
          const reply = await send(ctx, wallet.id, { type: 'attempt', attempt_id: newId('sa'), payout_id: newId('po'), input, ctx: actx, dry_run: false });
          let a = reply.attempt!;
          if (reply.created) signal(ctx, a);
          a = await executeNow(ctx, a);
          if (reply.created) created(ctx, `/v1/agent-wallets/${wallet.id}/spend-attempts/${a.id}`);
          return presentAttempt(await withPayout(a));
        },
      },
      evaluateAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await walletOf(ctx);
          const { input, railEnabled } = await readInput(ctx);
          const actx = await contextFor(ctx, wallet, input, railEnabled);
          const { evaluation } = await send(ctx, wallet.id, { type: 'attempt', attempt_id: '', payout_id: '', input, ctx: actx, dry_run: true });
          const e = evaluation!;
          return { status: e.status, ...(e.reason ? { reason: e.reason } : {}), trace: e.trace, windows: e.windows };
        },
      },
      listAttempts: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          // validated: a repeated or bracketed parameter arrives as an array or object and must not reach the store
          const q = validate<{ limit?: string; cursor?: string; status?: string }>('AgentSpendAttemptListQuery', ctx.params.query ?? {}, 'query');
          const limit = q.limit === undefined ? 20 : Number(q.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer from 1 to 100');
          const filter: Record<string, unknown> = { agent_wallet_id: wallet.id, merchant_id: wallet.merchant_id };
          if (q.status) filter.status = q.status;
          if (q.cursor) filter.id = { $lt: q.cursor };
          const rows = await store.find<SpendAttemptDoc>(ATTEMPTS, filter as never, { sort: 'id', desc: true, limit: limit + 1 });
          const page = rows.slice(0, limit);
          const has_more = rows.length > limit;
          return { data: await Promise.all(page.map(async (a) => presentAttempt(await withPayout(a)))), has_more, next_cursor: has_more ? page[page.length - 1].id : null };
        },
      },
      getAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await walletOf(ctx);
          return presentAttempt(await withPayout(await attemptOf(ctx, wallet)));
        },
      },
      approveAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          const a = await attemptOf(ctx, wallet);
          const railEnabled = !!findRail(config.rails, a.chain, a.network, a.token_symbol);
          const actx = await contextFor(ctx, wallet, a, railEnabled);
          const reply = await send(ctx, wallet.id, { type: 'approve', attempt_id: a.id, payout_id: newId('po'), ctx: actx });
          signal(ctx, reply.attempt!);
          return presentAttempt(await withPayout(await executeNow(ctx, reply.attempt!)));
        },
      },
      denyAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          const a = await attemptOf(ctx, wallet);
          const reply = await send(ctx, wallet.id, { type: 'deny', attempt_id: a.id, caller_merchant_id: wallet.merchant_id });
          return presentAttempt(reply.attempt!);
        },
      },
      /** For x402 redemption: run a pending ledger execution now. */
      execute: {
        visibility: 'public',
        async handler(ctx: Context<{ attempt_id: string; wallet_id: string }>) {
          return (await send(ctx, ctx.params.wallet_id, { type: 'execute', attempt_id: ctx.params.attempt_id })).attempt;
        },
      },
    },
    started(this: { broker: { call: Context['call'] }; logger: { warn(...a: unknown[]): void } }) {
      const broker = this.broker;
      scanner = new DueScanner<SpendAttemptDoc>({
        name: 'agent spend executions', store, coll: ATTEMPTS, dueField: 'execute_due_at', leaseMs: 30_000,
        intervalMs: config.agents.scanIntervalMs, now: () => rt.now(), log: this.logger,
        // a spend decided less than a lease ago is still being executed by its request
        handle: async (a) => { await executeNow({ call: broker.call.bind(broker) } as Pick<Context, 'call'>, a); },
      });
      scanner.start();
    },
    async stopped() {
      await scanner?.stop();
    },
  } as unknown as ServiceSchema;
}
