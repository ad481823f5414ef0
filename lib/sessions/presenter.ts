/** The PaymentSession as the API shows it, and the part of it a buyer may see (hosted checkout). */
import type { Config } from '../../config/index.ts';
import { toApiNumber } from '../core/money.ts';
import { explorerUrl, paymentUri, type AddressChain } from '../addresses/addresses.ts';
import type { PaymentSessionState } from './payment-session.ts';

/**
 * The spec's fields plus additive exact amounts and deposits. `processed` is the Ethereum block the
 * listener has processed up to (lib/chains/cursor.ts: ethereumProcessedBlock): confirmations of deposits
 * in blocks keep growing after the credit, and a reader should see today's count. `refunded`: what the
 * session's refunds took (lib/refunds: every refund not failed), smallest units.
 */
export function presentSession(
  s: PaymentSessionState,
  config: Pick<Config, 'chains' | 'publicUrl'>,
  processed?: number,
  refunded: string = '0',
) {
  const net = config.chains[s.chain as AddressChain]?.[s.network as 'testnet' | 'mainnet'];
  const depth = s.chain === 'ethereum' ? ((net as { confirmations?: number } | undefined)?.confirmations ?? 1) : 0;
  const confirmationsOf = (d: PaymentSessionState['deposits'][number]) =>
    processed !== undefined && d.block_number !== null && !d.reverted
      ? Math.max(d.confirmations, processed - d.block_number + depth)
      : d.confirmations;
  const target = {
    chain: s.chain,
    network: s.network,
    token: s.token,
    decimals: s.decimals,
    address: s.address,
    amount_subunits: s.expected_subunits,
    token_contract: s.token === 'USDC' ? (net?.usdcToken ?? '') : '',
    rpc_url: net?.rpcUrl ?? '',
  };
  const paying = [...s.deposits].reverse().find((d) => d.counted && !d.reverted && !d.simulated && d.tx_hash);
  // a local development chain has no public explorer: no link rather than a wrong one
  const explorer = explorerUrl(target, paying?.tx_hash ?? null);
  return {
    session_id: s.id,
    merchant_id: s.merchant_id,
    expected_amount: toApiNumber(s.expected_subunits, s.decimals),
    received_amount: toApiNumber(s.received_subunits, s.decimals),
    expected_amount_subunits: s.expected_subunits,
    received_amount_subunits: s.received_subunits,
    refunded_amount: toApiNumber(refunded, s.decimals),
    refunded_amount_subunits: refunded,
    address: s.address,
    status: s.status,
    metadata: s.metadata,
    expires_at: s.expires_at,
    ...(s.completed_at ? { completed_at: s.completed_at } : {}),
    ...(s.expired_at ? { expired_at: s.expired_at } : {}),
    ...(s.quote ? { quote: s.quote } : {}),
    ...(s.completion_rate ? { completion_rate: s.completion_rate } : {}),
    created_at: s.created_at,
    updated_at: s.updated_at,
    demo: s.demo,
    currency: s.token,
    payment_url: `${config.publicUrl}/checkout/${s.id}`,
    qr_data: paymentUri(target),
    ...(explorer ? { explorer_url: explorer } : {}),
    ...(s.return_url ? { return_url: s.return_url } : {}),
    paymentMethod: { methodID: s.method_id, chain: s.chain, token: s.token, network: s.network },
    deposits: s.deposits.map((d) => ({
      tx_hash: d.tx_hash,
      index: d.index,
      amount: toApiNumber(d.amount_subunits, s.decimals),
      amount_subunits: d.amount_subunits,
      token: d.token,
      confirmations: confirmationsOf(d),
      detected_at: d.detected_at,
      late: d.late,
      counted: d.counted,
      reverted: d.reverted,
      simulated: d.simulated,
    })),
  };
}

export type PresentedSession = ReturnType<typeof presentSession>;

/** What a buyer may see of a session: no merchant id, no metadata. */
export function buyerView(s: PaymentSessionState, config: Pick<Config, 'chains' | 'publicUrl'>) {
  const p = presentSession(s, config);
  return {
    session_id: p.session_id,
    status: p.status,
    expected_amount: p.expected_amount,
    received_amount: p.received_amount,
    received_amount_subunits: p.received_amount_subunits,
    currency: p.currency,
    chain: s.chain,
    network: s.network,
    address: p.address,
    qr_data: p.qr_data,
    ...(p.explorer_url ? { explorer_url: p.explorer_url } : {}),
    expires_at: p.expires_at,
    ...(p.completed_at ? { completed_at: p.completed_at } : {}),
    demo: p.demo,
  };
}

/** At most this many characters of an order reference are shown (a buyer-facing label, not a document). */
export const ORDER_REFERENCE_MAX = 64;

/**
 * The merchant's order reference of a session, for the buyer (checkout page, receipt): `metadata.order_id`,
 * else `metadata.reference`, when it is a non-empty string or a number; nothing else of the metadata.
 */
export function orderReference(metadata: Record<string, unknown> | undefined): string | null {
  for (const key of ['order_id', 'reference']) {
    const v = metadata?.[key];
    const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : '';
    if (text) return text.length > ORDER_REFERENCE_MAX ? `${text.slice(0, ORDER_REFERENCE_MAX - 1)}…` : text;
  }
  return null;
}
