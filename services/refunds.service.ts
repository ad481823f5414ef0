/**
 * Refunds of payment sessions (facade): POST/GET /v1/payment_sessions/{session_id}/refunds and GET …/{refund_id}.
 * The rules live in lib/refunds; on-chain refunds are executed by the money-out service's refund executor.
 * Idempotency-Key: the payouts' rules (24 h, scoped to the merchant; same body and session → the refund,
 * 201; another body or session → 409 code 5; concurrent requests with one key create one refund).
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
import { feeQuoter } from '../lib/treasury/fee-quote.ts';
import { loadCallingMerchant, callingMerchant } from '../lib/merchants/caller.ts';
import { merchantLimitViolation } from '../lib/ops/alerts/index.ts';
import { acceptRefund, checkRefund, ownSession, presentRefund, type RefundDeps } from '../lib/refunds/accept.ts';
import { addressInspector } from '../lib/refunds/destination.ts';
import { REFUNDS, type RefundDoc } from '../lib/refunds/model.ts';
import type { PayoutMerchant } from '../lib/payouts/accept.ts';

type Http = { body?: unknown; query?: unknown; params?: Record<string, string | undefined> };

export function createRefundsService(rt: Runtime): ServiceSchema {
  const { store, config } = rt;
  const idem = new Idempotency(store);
  const wallets = openWalletDirectory(store, config.dataDir, () => rt.now());
  const present = (r: RefundDoc) => presentRefund(r, config.rails);
  const quoteFee = feeQuoter(config);
  const inspect = addressInspector(config);

  const depsFor = (m: PayoutMerchant): RefundDeps => ({
    store,
    rails: config.rails,
    wallets,
    quoteFee,
    inspect,
    now: () => rt.now(),
    signal: (outcome, rail) => merchantLimitViolation(rt, m, outcome, rail),
  });
  const own = async (merchantId: string, sessionId: string, id: unknown) => {
    const r = typeof id === 'string' && id.length <= 64 ? await store.get<RefundDoc>(REFUNDS, id) : null;
    if (!r || r.merchant_id !== merchantId || r.session_id !== sessionId) throw notFound('refund');
    return r;
  };

  return {
    name: 'refunds',
    actions: {
      /** POST /v1/payment_sessions/{session_id}/refunds */
      async create(ctx: Context<Http>) {
        const m = await loadCallingMerchant(store, ctx);
        const sessionId = ctx.params.params?.session_id ?? '';
        const body = validate('CreateRefundRequest', ctx.params.body ?? {});
        const key = idempotencyKey(requestMeta(ctx).headers?.['idempotency-key']);
        const deps = depsFor(m);
        const req =
          key === undefined ? null : { scope: `refunds.create:${m.id}`, key, payload: { session_id: sessionId, ...body }, now: rt.now() };
        // a replay answers before any check: the refund exists whatever is left to refund now
        const replay = async () => {
          const earlier = req && (await idem.replay<{ id: string }>(req));
          return earlier ? { refund: await own(m.id, sessionId, earlier.id), events: [] } : undefined;
        };
        const accepted =
          (await replay()) ??
          (await checkRefund(deps, m, sessionId, body)
            .then((c) =>
              acceptRefund(deps, m, c, {
                before: replay,
                extra: (r) => (req ? [idem.record(req, { id: r.id })] : []),
              }),
            )
            .catch(async (e) => {
              // a retry that raced its first request sees the totals that request just took: answer with
              // that refund, never with a refusal that reads as "it failed, refund again"
              const earlier = await replay();
              if (earlier) return earlier;
              throw e;
            }));
        for (const event_id of accepted.events) ctx.emit('webhooks.nudge', { event_id }).catch(() => undefined);
        if (accepted.refund.status === 'pending') ctx.emit('money-out.nudge', { refund_id: accepted.refund.id }).catch(() => undefined);
        created(ctx, `/v1/payment_sessions/${accepted.refund.session_id}/refunds/${accepted.refund.id}`);
        return present(accepted.refund);
      },
      /** GET /v1/payment_sessions/{session_id}/refunds/{refund_id} */
      async get(ctx: Context<Http>) {
        const merchantId = callingMerchant(ctx).merchant_id;
        const session = await ownSession(store, merchantId, ctx.params.params?.session_id);
        return present(await own(merchantId, session.id, ctx.params.params?.refund_id));
      },
      /** GET /v1/payment_sessions/{session_id}/refunds: newest first */
      async list(ctx: Context<Http>) {
        const merchantId = callingMerchant(ctx).merchant_id;
        const session = await ownSession(store, merchantId, ctx.params.params?.session_id);
        const q = validate('RefundListQuery', ctx.params.query ?? {}, 'query');
        return pageById<RefundDoc, unknown>(store, REFUNDS, { session_id: session.id }, { cursor: q.cursor, limit: q.limit }, present);
      },
    },
  };
}
