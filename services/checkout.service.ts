/**
 * The hosted checkout behind payment_url: GET /checkout/{session_id} (HTML) and its status
 * (JSON, buyer-safe: no merchant id, no metadata). Session ids are unguessable, so the link is the
 * capability, as with other hosted checkouts.
 */
import QRCode from 'qrcode';
import type { Context, ServiceSchema } from 'moleculer';
import type { Runtime } from '../lib/runtime/index.ts';
import { notFound } from '../lib/core/errors.ts';
import { fromSubunits } from '../lib/core/money.ts';
import { PAGE_HEADERS, renderCheckout } from '../lib/checkout/page.ts';
import { buyerView } from '../lib/sessions/presenter.ts';
import { requestMeta } from '../lib/core/request-meta.ts';
import type { PaymentSessionState } from '../lib/sessions/payment-session.ts';

type Params = { params: { session_id: string } };

export function createCheckoutService(rt: Runtime): ServiceSchema {
  async function load(id: unknown): Promise<PaymentSessionState> {
    const s = typeof id === 'string' ? await rt.store.get<PaymentSessionState>('payment_sessions', id) : null;
    if (!s) throw notFound('checkout');
    return s;
  }

  return {
    name: 'checkout',
    actions: {
      page: {
        async handler(ctx: Context<Params>) {
          const s = await load(ctx.params.params?.session_id);
          const v = buyerView(s, rt.config);
          const merchant = s.demo ? null : await rt.store.get<{ id: string; name: string }>('merchants', s.merchant_id);
          const meta = requestMeta(ctx);
          meta.$responseType = 'text/html; charset=utf-8';
          meta.$responseHeaders = { ...PAGE_HEADERS };
          return renderCheckout({
            ...v,
            title: merchant ? `Pay ${merchant.name}` : 'Demo checkout',
            expected_amount: fromSubunits(s.expected_subunits, s.decimals),
            received_amount: fromSubunits(s.received_subunits, s.decimals),
            paid: BigInt(s.received_subunits) > 0n,
            qr_svg: await QRCode.toString(v.qr_data, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
          });
        },
      },
      status: {
        async handler(ctx: Context<Params>) {
          requestMeta(ctx).$responseHeaders = { 'Cache-Control': 'no-store' };
          return buyerView(await load(ctx.params.params?.session_id), rt.config);
        },
      },
    },
  } as ServiceSchema;
}
