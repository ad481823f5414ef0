/**
 * Payouts (facade): POST/GET /v1/payouts. The rules live in lib/payouts/accept.ts; on-chain execution of
 * `execution: 'chain'` payouts belongs to the chain executor (lib/chains, README "Sweeps, payouts and gas
 * wallets"). Idempotency-Key: the catalog's rules (24 h, same body → the payout, other body → 409 code 5;
 * concurrent requests with one key create one payout and one transfer).
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import { created } from './http-meta.ts';
import { validate } from '../lib/http/validation.ts';
import { notFound } from '../lib/core/errors.ts';
import { Idempotency, idempotencyKey } from '../lib/core/idempotency.ts';
import { openWalletDirectory } from '../lib/wallets/directory.ts';
import { pageById } from '../lib/core/paging.ts';
import { acceptPayout, checkPayout, presentPayout, type AcceptDeps, type PayoutMerchant } from '../lib/payouts/accept.ts';
import { PAYOUTS, type PayoutDoc } from '../lib/payouts/model.ts';
import type { Filter } from '../lib/store/port.ts';
import { merchantLimitViolation } from '../lib/ops/alerts/index.ts';
import { feeQuoter } from '../lib/treasury/fee-quote.ts';
import { callingMerchant, loadCallingMerchant } from '../lib/merchants/caller.ts';

type Http = { body?: unknown; query?: unknown; params?: Record<string, string | undefined> };

export function createPayoutsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const idem = new Idempotency(store);
  const wallets = openWalletDirectory(store, config.dataDir, () => rt.now());
  const present = (p: PayoutDoc) => presentPayout(p, config.rails);
  const quoteFee = feeQuoter(config);

  const depsFor = (m: PayoutMerchant): AcceptDeps => ({
    store,
    rails: config.rails,
    now: () => rt.now(),
    wallets,
    limits: { payoutAmountLimit: config.payoutAmountLimit, dailyPayoutLimit: config.dailyPayoutLimit },
    quoteFee,
    signal: (outcome, rail) => merchantLimitViolation(rt, m, outcome, rail),
  });
  const own = async (merchantId: string, id: unknown) => {
    const p = typeof id === 'string' && id.length <= 64 ? await store.get<PayoutDoc>(PAYOUTS, id) : null;
    if (!p || p.merchant_id !== merchantId) throw notFound('payout');
    return p;
  };

  return {
    name: 'payouts',
    actions: {
      /** POST /v1/payouts */
      async create(ctx: Context<Http>) {
        const m = await loadCallingMerchant(store, ctx);
        const body = validate('CreatePayoutRequest', ctx.params.body ?? {});
        const key = idempotencyKey(requestMeta(ctx).headers?.['idempotency-key']);
        const deps = depsFor(m);
        const req = key === undefined ? null : { scope: `payouts.create:${m.id}`, key, payload: body, now: rt.now() };
        // a replay answers before any check: the payout exists whatever the balance is now
        const replay = async () => {
          const earlier = req && (await idem.replay<{ id: string }>(req));
          return earlier ? { payout: await own(m.id, earlier.id), events: [] } : undefined;
        };
        const accepted =
          (await replay()) ??
          (await acceptPayout(deps, m, await checkPayout(deps, m, body), {
            before: replay,
            extra: (p) => (req ? [idem.record(req, { id: p.id })] : []),
          }).catch(async (e) => {
            // a retry that raced its first request may see the balance or daily volume that request just
            // took: answer with that payout, never with a refusal that reads as "it failed, pay again"
            const earlier = await replay();
            if (earlier) return earlier;
            throw e;
          }));
        for (const event_id of accepted.events) ctx.emit('webhooks.nudge', { event_id }).catch(() => undefined);
        // an on-chain payout: the executor (money-out) may start now instead of on its next scan (best effort)
        if (accepted.payout.execution === 'chain' && accepted.payout.status === 'pending')
          ctx.emit('money-out.nudge', { payout_id: accepted.payout.id }).catch(() => undefined);
        // an internal transfer of real money: its custody move may start now too
        if (accepted.payout.execution === 'ledger' && !accepted.payout.simulated)
          ctx.emit('money-out.nudge', { payout_id: accepted.payout.id, custody: true }).catch(() => undefined);
        created(ctx, `/v1/payouts/${accepted.payout.id}`);
        return present(accepted.payout);
      },
      /** GET /v1/payouts/{payout_id} */
      async get(ctx: Context<Http>) {
        return present(await own(callingMerchant(ctx).merchant_id, ctx.params.params?.payout_id));
      },
      /** GET /v1/payouts */
      async list(ctx: Context<Http>) {
        const merchantId = callingMerchant(ctx).merchant_id;
        const q = validate('PayoutListQuery', ctx.params.query ?? {}, 'query');
        const filter: Filter = { merchant_id: merchantId };
        if (q.wallet_id) filter.wallet_id = q.wallet_id;
        return pageById<PayoutDoc, unknown>(store, PAYOUTS, filter, { cursor: q.cursor, limit: q.limit }, present);
      },
    },
  };
}
