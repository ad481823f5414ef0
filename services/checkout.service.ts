/**
 * The hosted checkout behind payment_url: GET /checkout/{session_id} (HTML, rendered for the session's
 * state by lib/checkout/) and its status (JSON, buyer-safe: no merchant id, no metadata). Session ids are
 * unguessable, so the link is the capability, as with other hosted checkouts. An unknown id is an HTML
 * page for a browser and the error envelope for anyone else.
 */
import QRCode from 'qrcode';
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { notFound } from '../lib/core/errors.ts';
import { PAGE_HEADERS, renderCheckout, renderNotFound } from '../lib/checkout/page.ts';
import { checkoutView } from '../lib/checkout/view.ts';
import { RatesEngine, type RateView } from '../lib/rates/engine.ts';
import { buyerView } from '../lib/sessions/presenter.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';

type Params = { params: { session_id: string } };

/** the currency the page shows a fiat equivalent in (the rates service's default quote) */
const FIAT = 'USD';

export function createCheckoutService(rt: Runtime): ServiceSchema {
  const rates = new RatesEngine(rt.store, rt.config, () => rt.now());

  async function find(id: unknown): Promise<PaymentSessionState | null> {
    return typeof id === 'string' ? rt.store.get<PaymentSessionState>('payment_sessions', id) : null;
  }

  /** A spot rate while something is still to pay (a paid session shows its recorded rate); none is fine. */
  async function rateFor(s: PaymentSessionState): Promise<RateView | null> {
    if (s.quote || (s.status !== 'pending' && s.status !== 'partial_paid')) return null;
    return rates.rate(s.token, FIAT).catch(() => null);
  }

  return {
    name: 'checkout',
    actions: {
      page: {
        async handler(ctx: Context<Params>) {
          const meta = requestMeta(ctx);
          const s = await find(ctx.params.params?.session_id);
          if (!s) {
            if (!/\btext\/html\b/i.test(meta.headers?.accept ?? '')) throw notFound('checkout');
            meta.$statusCode = 404;
            meta.$responseType = 'text/html; charset=utf-8';
            meta.$responseHeaders = { ...PAGE_HEADERS };
            return renderNotFound(ctx.requestID ?? '');
          }
          const merchant = s.demo ? null : await rt.store.get<{ id: string; name: string }>('merchants', s.merchant_id);
          const view = checkoutView(s, { merchantName: merchant?.name ?? null, config: rt.config, rate: await rateFor(s), now: rt.now() });
          const qr = view.pay_uri ? await QRCode.toString(view.pay_uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }) : null;
          meta.$responseType = 'text/html; charset=utf-8';
          meta.$responseHeaders = { ...PAGE_HEADERS };
          return renderCheckout(view, qr);
        },
      },
      status: {
        async handler(ctx: Context<Params>) {
          const s = await find(ctx.params.params?.session_id);
          if (!s) throw notFound('checkout');
          requestMeta(ctx).$responseHeaders = { 'Cache-Control': 'no-store' };
          return buyerView(s, rt.config);
        },
      },
    },
  };
}
