/**
 * Receipts of payment sessions: who may have one (a session that has received money), what it says
 * (model.ts), how it is rendered (render.ts, in the pool of pool.ts) and its ETag.
 */
import type { Store } from '../store/port.ts';
import type { Config } from '../../config/index.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';
import { receiptData, type ReceiptData } from './model.ts';
import { REFUNDS, type RefundDoc } from '../refunds/model.ts';

export { receiptData, NoReceiptError, fiatValue, type ReceiptData } from './model.ts';
export { ReceiptWorkers, etagOf, notModified } from './pool.ts';

export const DEMO_MERCHANT_NAME = 'Demo checkout (test network, no real money)';

/** The receipt of a session, with the merchant's current display name and the session's refunds; NoReceiptError when nothing was received. */
export async function receiptFor(store: Store, config: Config, s: PaymentSessionState): Promise<ReceiptData> {
  const merchant = s.demo ? null : await store.get<{ id: string; name: string }>('merchants', s.merchant_id);
  const rpcUrl = config.chains[s.chain as 'ethereum' | 'solana']?.[s.network as 'testnet' | 'mainnet']?.rpcUrl ?? '';
  const refunds = s.demo ? [] : await store.find<RefundDoc>(REFUNDS, { session_id: s.id }, { limit: 500 });
  return receiptData(s, merchant?.name ?? DEMO_MERCHANT_NAME, rpcUrl, refunds);
}
