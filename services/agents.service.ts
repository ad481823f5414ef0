/**
 * Agent wallets (facade): spend policies and spend attempts. Validates, finds out the facts (lib/spend/facts.ts:
 * merchant, wallet, rail, what the target is), and asks the wallet's actor (`agent-wallet-actors`), which
 * decides and writes. Runs the scanner that finishes ledger executions a crash interrupted.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import type { Evaluation } from '../lib/spend/policy.ts';
import { merchantCaller } from '../lib/core/request-meta.ts';
import { callingMerchant, loadCallingMerchant } from '../lib/merchants/caller.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { badRequest, notFound } from '../lib/core/errors.ts';
import { newId } from '../lib/core/ids.ts';
import { DueScanner } from '../lib/core/due-scanner.ts';
import { findRail } from '../config/rails.ts';
import { knownRails } from '../lib/catalog/rules.ts';
import { ATTEMPTS, type SpendAttemptDoc, type WalletFacts } from '../lib/spend/attempts.ts';
import {
  attemptContext,
  attemptInput,
  attemptOf,
  checkedPolicy,
  limitViolationLabels,
  listAttempts,
  showAttempt,
  walletFacts,
} from '../lib/spend/facts.ts';
import {
  AGENT_WALLET_STATES,
  type AgentWalletMsg,
  type AgentWalletReply,
  type AgentWalletState,
  type StoredPolicy,
} from '../lib/agents/state.ts';
import { limitViolation } from '../lib/ops/alerts/index.ts';
import { sendToActor } from '../mixins/actor-host.mixin.ts';

type Http = { body?: unknown; query?: Record<string, string | undefined>; params?: Record<string, string | undefined> };
type Caller = Pick<Context, 'call' | 'broker'>;

/** A spend policy as the API shows it. */
const presentPolicy = (walletId: string, p: StoredPolicy) => ({
  id: p.id,
  agent_wallet_id: walletId,
  version: p.version_no,
  ...p.body,
  created_at: p.created_at,
});

/** A cap breach or a gated mainnet attempt counts as a limit violation (metric and alert). */
function signal(rt: Runtime, ctx: Context, a: SpendAttemptDoc) {
  const user = merchantCaller(ctx);
  const labels = limitViolationLabels(a, !!user?.sandbox);
  if (labels) limitViolation(rt, labels, { merchant_id: user?.merchant_id ?? null, ctx });
}

/** Finishes ledger executions a request did not (its node died between decision and execution). */
function executionScanner(rt: Runtime, execute: (a: SpendAttemptDoc) => Promise<unknown>, log: { warn(...a: unknown[]): void }) {
  return new DueScanner<SpendAttemptDoc>({
    name: 'agent spend executions',
    store: rt.store,
    coll: ATTEMPTS,
    dueField: 'execute_due_at',
    leaseMs: 30_000,
    intervalMs: rt.config.agents.scanIntervalMs,
    now: () => rt.now(),
    log,
    handle: async (a) => {
      await execute(a);
    },
  });
}

/** The enabled rail of an attempt's chain, network and token, if any. */
const railOf = (config: Runtime['config'], x: { chain: string; network: string; token_symbol: string }) =>
  findRail(config.rails, x.chain, x.network, x.token_symbol);

/** An on-chain spend is a payout: the platform's payout limits with the rail's decimals. */
function payoutLimits(config: Runtime['config'], x: { chain: string; network: string; token_symbol: string }) {
  const rail = railOf(config, x);
  const limits = { payoutAmountLimit: config.payoutAmountLimit, dailyPayoutLimit: config.dailyPayoutLimit };
  return rail ? { limits, decimals: rail.decimals } : undefined;
}

/** Spend policies belong to agent wallets. */
function requireAgentWallet(wallet: WalletFacts): void {
  if (wallet.type !== 'agent')
    throw badRequest(`wallet ${wallet.id} is a ${wallet.type} wallet; spend policies belong to agent wallets`, {
      field: 'agent_wallet_id',
      remediation: 'Use the id of a wallet created with type agent (POST /v1/wallets with "type": "agent").',
    });
}

/** A dry run's answer: the verdict, the rules in order and the windows. */
const presentEvaluation = (e: Evaluation) => ({
  status: e.status,
  ...(e.reason ? { reason: e.reason } : {}),
  trace: e.trace,
  windows: e.windows,
});

/** What the agent actions share: the wallet actor, the caller's wallet and attempt, a new attempt's facts. */
function agentRequests(rt: Runtime) {
  const { store, config } = rt;
  const known = knownRails();

  const send = (ctx: Caller, id: string, msg: AgentWalletMsg) =>
    sendToActor<AgentWalletMsg, AgentWalletReply>(ctx, 'agent-wallet-actors', id, msg);

  const walletOf = (ctx: Context<Http>) => walletFacts(store, ctx.params.params?.agent_wallet_id ?? '');
  /** A wallet the caller owns, for policy and attempt reads (another merchant's is a 404 like an unknown one). */
  async function ownWallet(ctx: Context<Http>): Promise<WalletFacts> {
    const w = await walletOf(ctx);
    if (w.merchant_id !== callingMerchant(ctx).merchant_id) throw notFound('agent wallet');
    return w;
  }
  const attemptIn = async (ctx: Context<Http>, wallet: WalletFacts) =>
    attemptOf(store, wallet, ctx.params.params?.attempt_id ?? '', callingMerchant(ctx).merchant_id);

  /** Checked body and the facts of a new attempt (or an evaluation). */
  async function prepare(ctx: Context<Http>) {
    const wallet = await walletOf(ctx);
    const { input, railEnabled: enabled } = attemptInput(validate('AgentSpendAttemptRequest', ctx.params.body), config.rails, known);
    const merchant = await loadCallingMerchant(store, ctx);
    const actx = await attemptContext(store, rt.now(), merchant, wallet, input, enabled, payoutLimits(config, input));
    return { wallet, input, actx };
  }

  /** A ledger execution right after the decision (the scanner finishes it if this node dies first). */
  async function executeNow(ctx: Caller, a: SpendAttemptDoc): Promise<SpendAttemptDoc> {
    if (a.status !== 'pending' || a.settlement?.status !== 'awaiting_execution') return a;
    return (await send(ctx, a.agent_wallet_id, { type: 'execute', attempt_id: a.id })).attempt ?? a;
  }

  return { send, walletOf, ownWallet, attemptIn, prepare, executeNow };
}

export function createAgentsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  let scanner: DueScanner<SpendAttemptDoc> | null = null;

  const { send, walletOf, ownWallet, attemptIn, prepare, executeNow } = agentRequests(rt);

  return {
    name: 'agents',
    actions: {
      putPolicy: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          requireAgentWallet(wallet);
          const body = checkedPolicy(validate('AgentSpendPolicyRequest', ctx.params.body));
          const reply = await send(ctx, wallet.id, {
            type: 'set_policy',
            wallet_id: wallet.id,
            merchant_id: wallet.merchant_id,
            policy_id: newId('pol'),
            body,
          });
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
          const { wallet, input, actx } = await prepare(ctx);
          const reply = await send(ctx, wallet.id, {
            type: 'attempt',
            attempt_id: newId('sa'),
            // only an attempt to an address on chain becomes a payout (lib/agents/reserve.ts)
            payout_id: actx.target.kind === 'chain' ? newId('po') : '',
            input,
            ctx: actx,
            dry_run: false,
          });
          if (reply.created) signal(rt, ctx, reply.attempt!);
          const a = await executeNow(ctx, reply.attempt!);
          if (reply.created) created(ctx, `/v1/agent-wallets/${wallet.id}/spend-attempts/${a.id}`);
          return showAttempt(store, a);
        },
      },
      evaluateAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          // another merchant's wallet is a 404 before anything about it is read or computed (its windows)
          await ownWallet(ctx);
          const { wallet, input, actx } = await prepare(ctx);
          const { evaluation } = await send(ctx, wallet.id, {
            type: 'attempt',
            attempt_id: '',
            payout_id: '',
            input,
            ctx: actx,
            dry_run: true,
          });
          return presentEvaluation(evaluation!);
        },
      },
      listAttempts: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          return listAttempts(store, await ownWallet(ctx), ctx.params.query ?? {});
        },
      },
      getAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          return showAttempt(store, await attemptIn(ctx, await walletOf(ctx)));
        },
      },
      approveAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          const a = await attemptIn(ctx, wallet);
          const actx = await attemptContext(
            store,
            rt.now(),
            await loadCallingMerchant(store, ctx),
            wallet,
            a,
            !!railOf(config, a),
            payoutLimits(config, a),
          );
          const reply = await send(ctx, wallet.id, { type: 'approve', attempt_id: a.id, payout_id: newId('po'), ctx: actx });
          signal(rt, ctx, reply.attempt!);
          return showAttempt(store, await executeNow(ctx, reply.attempt!));
        },
      },
      denyAttempt: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          const a = await attemptIn(ctx, wallet);
          const reply = await send(ctx, wallet.id, { type: 'deny', attempt_id: a.id, caller_merchant_id: wallet.merchant_id });
          return showAttempt(store, reply.attempt!);
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
    started(this: { broker: Context['broker']; logger: { warn(...a: unknown[]): void } }) {
      const broker = this.broker;
      // a spend decided less than a lease ago is still being executed by its request
      scanner = executionScanner(rt, (a) => executeNow({ call: broker.call.bind(broker), broker } as Caller, a), this.logger);
      scanner.start();
    },
    async stopped() {
      await scanner?.stop();
    },
  };
}
