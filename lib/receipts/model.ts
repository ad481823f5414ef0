/**
 * What a receipt says, decided from the session alone (pure; no clock, no I/O), so that the same session
 * always yields the same document: every field is already a display string, amounts exact (BigInt
 * decimal text, never floating point), timestamps in UTC.
 */
import { fromSubunits } from '../core/money.ts';
import { explorerUrl } from '../addresses/addresses.ts';
import { orderReference } from '../sessions/presenter.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';
import type { RecordedRate } from '../core/rate.ts';

export interface ReceiptDeposit {
  /** null for a sandbox simulation */
  tx_hash: string | null;
  amount: string;
  detected_at: string;
  credited_at: string;
  explorer_url: string | null;
  late: boolean;
  simulated: boolean;
}

/** A refund of the session as the receipt shows it (lib/refunds; failed refunds are left out). */
export interface ReceiptRefund {
  id: string;
  amount: string;
  status: string;
  /** null: a simulated refund of sandbox money without an address */
  destination: string | null;
  tx_hash: string | null;
  explorer_url: string | null;
  created_at: string;
  completed_at: string | null;
  simulated: boolean;
}

/** What the receipt model reads of a refund. */
export interface RefundLike {
  id: string;
  amount_subunits: string;
  status: string;
  destination: string | null;
  tx_hash: string | null;
  created_at: string;
  completed_at: string | null;
  simulated: boolean;
}

export interface ReceiptData {
  merchant_name: string;
  session_id: string;
  /** the merchant's order reference (metadata.order_id, else metadata.reference), or null */
  order_reference: string | null;
  status: string;
  /** late, overpaid, partial: what a reader must notice */
  marks: string[];
  token: string;
  chain: string;
  network: string;
  expected_amount: string;
  received_amount: string;
  created_at: string;
  /** completion time, or the last counted deposit for a session that never completed */
  issued_at: string;
  /** the same instant as ISO text: the PDF's fixed creation date */
  issued_iso: string;
  completed_at: string | null;
  deposits: ReceiptDeposit[];
  /** the refunds not failed, oldest first, and their sum */
  refunds: ReceiptRefund[];
  refunded_amount: string;
  /** the explorer link in the QR code: the paying transaction, else the deposit address; null on a local chain (no public explorer) */
  qr_url: string | null;
  /** the value at completion in fiat; stale: the rate was older than RATES_MAX_AGE then */
  fiat: { quote: string; rate: string; value: string; source: string; as_of: string; stale: boolean } | null;
}

export class NoReceiptError extends Error {}

const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

/** Multiplies a token amount (smallest units) by a decimal rate, rounded half-up to `places` decimals. */
export function fiatValue(subunits: string, decimals: number, rate: string, places = 2): string {
  const [whole, frac = ''] = rate.split('.');
  const rateUnits = BigInt(whole + frac);
  const scale = decimals + frac.length; // product = subunits × rateUnits / 10^scale
  const product = BigInt(subunits) * rateUnits;
  const shift = scale - places;
  let cents: bigint;
  if (shift <= 0) cents = product * 10n ** BigInt(-shift);
  else {
    const div = 10n ** BigInt(shift);
    cents = (product + div / 2n) / div;
  }
  const s = cents.toString().padStart(places + 1, '0');
  return `${s.slice(0, s.length - places)}.${s.slice(s.length - places)}`;
}

/** The receipt of a session that has received money, with its refunds; NoReceiptError otherwise. */
export function receiptData(s: PaymentSessionState, merchantName: string, rpcUrl = '', refunds: RefundLike[] = []): ReceiptData {
  const counted = s.deposits.filter((d) => d.counted && !d.reverted);
  if (BigInt(s.received_subunits) <= 0n || counted.length === 0) {
    throw new NoReceiptError(`session ${s.id} has received no payment yet (status ${s.status}); a receipt exists once money has arrived`);
  }
  const target = { chain: s.chain, network: s.network, address: s.address, rpc_url: rpcUrl };
  const received = BigInt(s.received_subunits);
  const expected = BigInt(s.expected_subunits);
  const marks: string[] = [];
  if (received > expected) marks.push(`OVERPAID by ${fromSubunits(received - expected, s.decimals)} ${s.token}`);
  if (received < expected) marks.push(`PARTIAL: ${fromSubunits(expected - received, s.decimals)} ${s.token} short`);
  if (counted.some((d) => d.late)) marks.push('LATE: money arrived after the session expired');
  const kept = refunds
    .filter((r) => r.status !== 'failed')
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  const refunded = kept.reduce((a, r) => a + BigInt(r.amount_subunits), 0n);
  if (refunded > 0n) marks.push(`REFUNDED: ${fromSubunits(refunded, s.decimals)} ${s.token}`);
  const last = counted.reduce((a, d) => (d.credited_at > a ? d.credited_at : a), counted[0].credited_at);
  const issued = s.completed_at ?? last;
  const paying = [...counted].reverse().find((d) => d.tx_hash);
  const rate = (s as { completion_rate?: RecordedRate & { stale?: boolean } }).completion_rate;
  return {
    merchant_name: merchantName,
    session_id: s.id,
    order_reference: orderReference(s.metadata),
    status: s.status,
    marks,
    token: s.token,
    chain: s.chain,
    network: s.network,
    expected_amount: fromSubunits(expected, s.decimals),
    received_amount: fromSubunits(received, s.decimals),
    created_at: utc(s.created_at),
    issued_at: utc(issued),
    issued_iso: issued,
    completed_at: s.completed_at ? utc(s.completed_at) : null,
    deposits: counted.map((d) => ({
      tx_hash: d.tx_hash,
      amount: fromSubunits(d.amount_subunits, s.decimals),
      detected_at: utc(d.detected_at),
      credited_at: utc(d.credited_at),
      explorer_url: d.tx_hash ? explorerUrl(target, d.tx_hash) : null,
      late: d.late,
      simulated: d.simulated,
    })),
    refunds: kept.map((r) => ({
      id: r.id,
      amount: fromSubunits(r.amount_subunits, s.decimals),
      status: r.status,
      destination: r.destination,
      tx_hash: r.tx_hash,
      explorer_url: r.tx_hash ? explorerUrl(target, r.tx_hash) : null,
      created_at: utc(r.created_at),
      completed_at: r.completed_at ? utc(r.completed_at) : null,
      simulated: r.simulated,
    })),
    refunded_amount: fromSubunits(refunded, s.decimals),
    qr_url: explorerUrl(target, paying?.tx_hash ?? null),
    fiat: rate
      ? {
          quote: rate.quote,
          rate: rate.rate,
          source: rate.source,
          as_of: utc(rate.as_of),
          value: fiatValue(s.received_subunits, s.decimals, rate.rate),
          stale: rate.stale === true,
        }
      : null,
  };
}
