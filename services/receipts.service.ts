/**
 * PDF receipts (facade): GET /v1/payment_sessions/{session_id}/receipt for the merchant (its X-API-Key;
 * demo sessions without credentials, as on GET session) and GET /checkout/{session_id}/receipt for the
 * buyer (the unguessable session id is the capability, as for the checkout page). Rendering runs in the
 * piscina pool; the ETag is the sha256 of the bytes and If-None-Match answers 304.
 */
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { clientHash, requestMeta } from '../lib/core/request-meta.ts';
import { conflict, notFound, rateLimited, unauthorized } from '../lib/core/errors.ts';
import { NoReceiptError, ReceiptWorkers, etagOf, notModified, receiptFor } from '../lib/receipts/index.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';

type Params = { params: { session_id: string } };

export function createReceiptsService(rt: Runtime): ServiceSchema {
  let pool: ReceiptWorkers;

  async function respond(ctx: Context, s: PaymentSessionState): Promise<Buffer | null> {
    let data;
    try {
      data = await receiptFor(rt.store, rt.config, s);
    } catch (e) {
      if (e instanceof NoReceiptError) throw conflict(e.message);
      throw e;
    }
    const pdf = await pool.render(data);
    const etag = etagOf(pdf);
    const meta = requestMeta(ctx);
    meta.$responseHeaders = {
      ETag: etag,
      'Cache-Control': 'private, no-cache',
      'Content-Disposition': `inline; filename="receipt-${s.id}.pdf"`,
      'X-Content-Type-Options': 'nosniff',
    };
    if (notModified(meta.headers?.['if-none-match'], etag)) {
      meta.$statusCode = 304;
      return null;
    }
    meta.$responseType = 'application/pdf';
    return pdf;
  }

  /** Rendering costs a worker ~15 ms: callers without a key are limited per client (hashed IP). */
  async function limitAnonymous(ctx: Context): Promise<void> {
    const ip = clientHash(ctx);
    const limit = rt.config.publicRateLimitPerMinute;
    if ((await rt.store.increment(`public:receipt:${ip}`, 1, 60_000, rt.now())) > limit) {
      throw rateLimited(`too many receipt requests from this client (at most ${limit} a minute); retry in a minute`);
    }
  }

  const load = async (id: unknown) => (typeof id === 'string' ? rt.store.get<PaymentSessionState>('payment_sessions', id) : null);

  return {
    name: 'receipts',
    actions: {
      /** GET /v1/payment_sessions/{session_id}/receipt */
      merchant: {
        async handler(ctx: Context<Params>) {
          const caller = requestMeta(ctx).user ?? null;
          const s = await load(ctx.params.params?.session_id);
          if (caller?.kind === 'merchant') {
            if (!s || (s.merchant_id !== caller.merchant_id && !s.demo)) throw notFound('payment session');
          } else {
            if (!s || !s.demo) throw unauthorized(); // nothing tells whether another id exists
            await limitAnonymous(ctx);
          }
          return respond(ctx, s);
        },
      },
      /** GET /checkout/{session_id}/receipt */
      buyer: {
        async handler(ctx: Context<Params>) {
          await limitAnonymous(ctx);
          const s = await load(ctx.params.params?.session_id);
          if (!s) throw notFound('checkout');
          return respond(ctx, s);
        },
      },
    },
    created() {
      pool = new ReceiptWorkers();
    },
    async stopped() {
      await pool?.close();
    },
  };
}
