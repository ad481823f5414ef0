/**
 * Agent wallets (facade): spend policies and spend attempts. Validates, finds out the facts (lib/spend/facts.ts:
 * merchant, wallet, rail, what the target is), and asks the wallet's actor (`agent-wallet-actors`), which
 * decides and writes. Runs the scanner that finishes ledger executions a crash interrupted.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { merchantCaller } from '../lib/core/request-meta.ts';
import { callingMerchant } from '../lib/merchants/caller.ts';
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

type Http = { body?: unknown; query?: Record<string, string | undefined>; params?: Record<string, string | undefined> };
type Caller = Pick<Context, 'call'>;

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

export function createAgentsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const known = knownRails();
  let scanner: DueScanner<SpendAttemptDoc> | null = null;

  const send = (ctx: Caller, id: string, msg: AgentWalletMsg) =>
    ctx.call('agent-wallet-actors.send', { id, msg }) as Promise<AgentWalletReply>;
  const railEnabled = (a: { chain: string; network: string; token_symbol: string }) =>
    !!findRail(config.rails, a.chain, a.network, a.token_symbol);

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
    const actx = await attemptContext(store, rt.now(), callingMerchant(ctx).merchant_id, wallet, input, enabled, payoutLimits(input));
    return { wallet, input, actx };
  }

  /** an on-chain spend is a payout: the platform's payout limits with the rail's decimals */
  function payoutLimits(x: { chain: string; network: string; token_symbol: string }) {
    const rail = config.rails.find((r) => r.chain === x.chain && r.network === x.network && r.token === x.token_symbol);
    const limits = { payoutAmountLimit: config.payoutAmountLimit, dailyPayoutLimit: config.dailyPayoutLimit };
    return rail ? { limits, decimals: rail.decimals } : undefined;
  }

  /** A ledger execution right after the decision (the scanner finishes it if this node dies first). */
  async function executeNow(ctx: Caller, a: SpendAttemptDoc): Promise<SpendAttemptDoc> {
    if (a.status !== 'pending' || a.settlement?.status !== 'awaiting_execution') return a;
    return (await send(ctx, a.agent_wallet_id, { type: 'execute', attempt_id: a.id })).attempt ?? a;
  }

  return {
    name: 'agents',
    actions: {
      putPolicy: {
        visibility: 'published',
        async handler(ctx: Context<Http>) {
          const wallet = await ownWallet(ctx);
          if (wallet.type !== 'agent')
            throw badRequest(`wallet ${wallet.id} is a ${wallet.type} wallet; spend policies belong to agent wallets`, {
              field: 'agent_wallet_id',
              remediation: 'Use the id of a wallet created with type agent (POST /v1/wallets with "type": "agent").',
            });
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
            payout_id: newId('po'),
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
          const e = evaluation!;
          return { status: e.status, ...(e.reason ? { reason: e.reason } : {}), trace: e.trace, windows: e.windows };
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
          const actx = await attemptContext(store, rt.now(), callingMerchant(ctx).merchant_id, wallet, a, railEnabled(a), payoutLimits(a));
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
    started(this: { broker: { call: Context['call'] }; logger: { warn(...a: unknown[]): void } }) {
      const broker = this.broker;
      // a spend decided less than a lease ago is still being executed by its request
      scanner = executionScanner(rt, (a) => executeNow({ call: broker.call.bind(broker) } as Caller, a), this.logger);
      scanner.start();
    },
    async stopped() {
      await scanner?.stop();
    },
  };
}
