/**
 * What the hosted checkout shows a buyer, decided from the session alone (pure: the rate and the clock are
 * passed in). One of four states, each with what it offers:
 *   open            amount, fiat equivalent, QR code and wallet link, copy buttons, countdown
 *   partially_paid  the same for what is left, and what was received
 *   paid            a clear paid message and the receipt; no QR code, no wallet link
 *   expired         says so; no QR code, no wallet link
 * A sandbox or demo session is TEST MODE. The order reference and the return link are the merchant's; no
 * other metadata reaches the buyer.
 */
import type { Config } from '../../config/index.ts';
import { fromSubunits } from '../core/money.ts';
import type { SpotRate } from '../core/rate.ts';
import { explorerUrl, paymentUri, type AddressChain } from '../addresses/addresses.ts';
import { orderReference } from '../sessions/presenter.ts';
import { fiatValue } from '../receipts/model.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';

export type CheckoutState = 'open' | 'partially_paid' | 'paid' | 'expired';

export const STATE_OF_STATUS: Record<string, CheckoutState> = {
  pending: 'open',
  partial_paid: 'partially_paid',
  completed: 'paid',
  expired: 'expired',
};

/** The amount in the merchant's currency: a fiat-priced session's own price, else token × a spot rate. */
export interface FiatEquivalent {
  amount: string;
  currency: string;
  /** the rate is older than RATES_MAX_AGE (shown, and flagged as such) */
  stale: boolean;
  /** when the rate was observed; null for the session's own price */
  as_of: string | null;
  /** the session was priced in this currency (exact), not converted for display */
  price: boolean;
}

export interface CheckoutView {
  session_id: string;
  state: CheckoutState;
  /** the session's own status (what /status reports) */
  status: string;
  title: string;
  /** a sandbox or demo session: no real money moves */
  test_mode: boolean;
  demo: boolean;
  token: string;
  chain: string;
  network: string;
  /** exact decimal strings in token units */
  expected: string;
  received: string;
  /** what is still to pay ('0' once paid in full) */
  due: string;
  received_subunits: string;
  address: string;
  /** the wallet URI (QR code and "Open in wallet") for the amount due; null once paid or expired */
  pay_uri: string | null;
  /** null on a local development chain */
  explorer_url: string | null;
  expires_at: string;
  completed_at: string | null;
  order_reference: string | null;
  fiat: FiatEquivalent | null;
  /** "Back to the shop", once paid or expired */
  return_url: string | null;
  /** money has arrived: the buyer's PDF receipt is offered */
  receipt: boolean;
}

export interface CheckoutInputs {
  merchantName: string | null;
  config: Pick<Config, 'chains'>;
  /** a spot rate of the session's token (USD), when one could be read; null otherwise */
  rate: (SpotRate & { stale: boolean }) | null;
  now: Date;
}

function fiatOf(s: PaymentSessionState, state: CheckoutState, rate: CheckoutInputs['rate']): FiatEquivalent | null {
  if (s.quote) return { amount: s.quote.amount, currency: s.quote.currency, stale: false, as_of: null, price: true };
  // paid: the value at completion (the rate the session recorded then), of what was received
  const recorded = state === 'paid' ? s.completion_rate : undefined;
  const r = recorded ?? (state === 'paid' ? null : rate);
  if (!r) return null;
  const subunits = state === 'paid' ? s.received_subunits : s.expected_subunits;
  return { amount: fiatValue(subunits, s.decimals, r.rate), currency: r.quote, stale: r.stale === true, as_of: r.as_of, price: false };
}

export function checkoutView(s: PaymentSessionState, i: CheckoutInputs): CheckoutView {
  let state = STATE_OF_STATUS[s.status] ?? 'expired';
  // past its deadline but not yet reached by the expiry scanner: already nothing to pay here
  if ((state === 'open' || state === 'partially_paid') && i.now.getTime() >= Date.parse(s.expires_at)) state = 'expired';
  const expected = BigInt(s.expected_subunits);
  const received = BigInt(s.received_subunits);
  const due = expected > received ? expected - received : 0n;
  const net = i.config.chains[s.chain as AddressChain]?.[s.network as 'testnet' | 'mainnet'];
  const target = {
    chain: s.chain,
    network: s.network,
    token: s.token,
    decimals: s.decimals,
    address: s.address,
    amount_subunits: due.toString(),
    token_contract: s.token === 'USDC' ? (net?.usdcToken ?? '') : '',
    rpc_url: net?.rpcUrl ?? '',
  };
  const payable = (state === 'open' || state === 'partially_paid') && due > 0n;
  const paying = [...s.deposits].reverse().find((d) => d.counted && !d.reverted && !d.simulated && d.tx_hash);
  return {
    session_id: s.id,
    state,
    status: s.status,
    title: s.demo ? 'Demo checkout' : i.merchantName ? `Pay ${i.merchantName}` : 'Checkout',
    test_mode: s.sandbox || s.demo,
    demo: s.demo,
    token: s.token,
    chain: s.chain,
    network: s.network,
    expected: fromSubunits(expected, s.decimals),
    received: fromSubunits(received, s.decimals),
    due: fromSubunits(due, s.decimals),
    received_subunits: s.received_subunits,
    address: s.address,
    pay_uri: payable ? paymentUri(target) : null,
    explorer_url: explorerUrl(target, paying?.tx_hash ?? null),
    expires_at: s.expires_at,
    completed_at: s.completed_at,
    order_reference: orderReference(s.metadata),
    fiat: fiatOf(s, state, i.rate),
    return_url: (state === 'paid' || state === 'expired') && s.return_url ? s.return_url : null,
    receipt: received > 0n,
  };
}
