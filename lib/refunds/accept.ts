/**
 * Accepting a refund: every refusal first (each a 4xx that says what to change), then one atomic write of
 * the refund, its ledger transfer (id = refund id: the amount reserved from the settlement wallet, or
 * posted at once when simulated), its network-fee reservation (the merchant pays it, as for payouts:
 * lib/treasury/fee-policy.ts), the session's refund totals (compare-and-set: concurrent refunds of one
 * session serialize here and can never pass what it received), its audit row, the Idempotency-Key record
 * and, when simulated, its completion and `refund.completed` webhook. A lost race re-reads and decides again.
 */
import { REMEDIATION, ServiceError, badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { toApiNumber } from '../core/money.ts';
import { METADATA_MAX_BYTES } from '../core/metadata.ts';
import { retryOnConflict } from '../core/retry.ts';
import { findRail, railKey, type Rail } from '../../config/rails.ts';
import { isConflict, isDuplicate, type Store, type WriteOp } from '../store/port.ts';
import { LedgerBatch, accountId, balance, isLedgerError, latestSettlement, walletAccount } from '../ledger/index.ts';
import { checkWalletNetwork, type PayoutMerchant } from '../payouts/accept.ts';
import type { WalletDirectory, WalletChain, WalletNetwork } from '../wallets/directory.ts';
import type { PaymentSessionState } from '../sessions/payment-session.ts';
import type { QuoteFee } from '../treasury/fee-quote.ts';
import type { FeeQuote } from '../treasury/fee-policy.ts';
import { reserveFee } from '../treasury/fee-booking.ts';
import { nativeAsset } from '../treasury/engine-deps.ts';
import { REFUNDS, REFUND_TOTALS, refundAuditOp, refundEventOp, totalsOp, type RefundDoc, type RefundTotalsDoc } from './model.ts';
import { basisOf, decideRefund, type RefundDecision } from './rules.ts';
import { refundDestination, type InspectAddress } from './destination.ts';

export const SESSIONS = 'payment_sessions';

export interface RefundBody {
  amount_subunits?: string;
  destination?: string;
  reason?: string;
  metadata?: Record<string, unknown>;
}

export interface RefundDeps {
  store: Store;
  rails: Rail[];
  wallets: WalletDirectory;
  quoteFee: QuoteFee;
  inspect: InspectAddress;
  now(): Date;
  /** counts a refusal in the abuse metric (same outcomes as payouts) */
  signal(outcome: 'mainnet_kyc_required', rail: { chain: string; network: string; token?: string }): void;
}

/** The caller's session (another merchant's, or a demo session, is a 404 like an unknown id). */
export async function ownSession(store: Store, merchantId: string, id: unknown): Promise<PaymentSessionState> {
  const s = typeof id === 'string' && id.length <= 64 ? await store.get<PaymentSessionState>(SESSIONS, id) : null;
  if (!s || s.demo || s.merchant_id !== merchantId) throw notFound('payment session');
  return s;
}

/** What passed every check and is about to be written. */
export interface CheckedRefund {
  session: PaymentSessionState;
  rail: Rail;
  /** null: decided in the write (the default amount) */
  requested: bigint | null;
  destination: string | null;
  source: 'sender' | 'merchant';
  simulated: boolean;
  reason: string | null;
  metadata: Record<string, unknown> | null;
  /** on-chain refunds: the network fee the merchant pays, quoted now */
  quote: FeeQuote | null;
}

/** The 409 of a refusal by the refund rules (envelope code 5). */
function refusal(d: Extract<RefundDecision, { ok: false }>, s: PaymentSessionState, rail: Rail): ServiceError {
  const units = (n: bigint) => `${toApiNumber(n, rail.decimals)} ${rail.token} (${n} subunits)`;
  const message =
    d.reason === 'nothing_received'
      ? `session ${s.id} has received nothing to refund`
      : d.reason === 'nothing_left'
        ? `everything session ${s.id} received is refunded or being refunded`
        : d.reason === 'exceeds'
          ? `the refund exceeds what is left to refund of session ${s.id}: ${units(d.left)} (received minus refunds not failed, pending ones included)`
          : `a refund comes from one kind of money (received on chain, or simulated); refund at most ${units(d.largest)} at once`;
  return conflict(message, {
    field: d.reason === 'exceeds' || d.reason === 'one_source' ? 'amount_subunits' : undefined,
    remediation:
      d.largest > 0n
        ? `Refund at most ${d.largest} subunits (amount_subunits), or leave amount_subunits out to refund the default.`
        : 'Nothing is left to refund on this session (GET /v1/payment_sessions/{session_id}/refunds lists its refunds).',
  });
}

export async function checkRefund(deps: RefundDeps, m: PayoutMerchant, sessionId: unknown, body: RefundBody): Promise<CheckedRefund> {
  const session = await ownSession(deps.store, m.id, sessionId);
  checkWalletNetwork(m, session.network, 'refunds', 'session_id', () =>
    deps.signal('mainnet_kyc_required', { chain: session.chain, network: session.network, token: session.token }),
  );
  const rail = findRail(deps.rails, session.chain, session.network, session.token);
  if (!rail) throw conflict(`the rail ${session.chain} ${session.network} ${session.token} of this session is no longer enabled`);
  let requested: bigint | null = null;
  if (body.amount_subunits !== undefined) {
    if (!/^[1-9]\d{0,77}$/.test(body.amount_subunits))
      throw badRequest('amount_subunits must be a positive digit string of smallest units without leading zeros', {
        field: 'amount_subunits',
      });
    requested = BigInt(body.amount_subunits);
  }
  const metadata = body.metadata ?? null;
  if (metadata && Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES)
    throw badRequest(`metadata is larger than 4KB (${METADATA_MAX_BYTES} bytes as JSON); keep references in it, not documents`, {
      field: 'metadata',
    });
  // a first decision, to know the money and the amount to quote; the write decides again
  const decision = decideRefund(basisOf(session, await deps.store.get<RefundTotalsDoc>(REFUND_TOTALS, session.id)), requested);
  if (!decision.ok) throw refusal(decision, session, rail);
  const { destination, source } = await refundDestination(deps, session, body.destination, decision.simulated);
  const wallet = await deps.wallets.defaultWallet(m.id, session.chain as WalletChain, session.network as WalletNetwork);
  const quote = decision.simulated
    ? null
    : await deps.quoteFee({
        chain: wallet.chain,
        network: wallet.network,
        token: rail.token,
        from: wallet.address,
        destination: destination!,
        amount: decision.amount,
      });
  return { session, rail, requested, destination, source, simulated: decision.simulated, reason: body.reason ?? null, metadata, quote };
}

export interface AcceptedRefund {
  refund: RefundDoc;
  /** webhook rows written (for webhooks.nudge) */
  events: string[];
}

/**
 * Builds and commits the refund, retrying lost races from fresh reads. `extra` adds writes that must commit
 * with it (the Idempotency-Key record); `before` runs first on every attempt (a replay) and may answer instead.
 */
export async function acceptRefund(
  deps: RefundDeps,
  m: PayoutMerchant,
  c: CheckedRefund,
  opts: { extra?: (r: RefundDoc) => WriteOp[]; before?: () => Promise<AcceptedRefund | undefined> } = {},
): Promise<AcceptedRefund> {
  const { rail } = c;
  const asset = railKey(rail);
  const wallet = await deps.wallets.defaultWallet(m.id, c.session.chain as WalletChain, c.session.network as WalletNetwork);
  return retryOnConflict(
    async () => {
      const earlier = await opts.before?.();
      if (earlier) return earlier;
      const now = deps.now();
      const at = now.toISOString();
      const session = await ownSession(deps.store, m.id, c.session.id);
      const totals = await deps.store.get<RefundTotalsDoc>(REFUND_TOTALS, session.id);
      const decision = decideRefund(basisOf(session, totals), c.requested);
      if (!decision.ok) throw refusal(decision, session, rail);
      // the money changed kind since the check (a simulated completion, a reorg): check again
      if (decision.simulated !== c.simulated)
        throw conflict('the session changed while the refund was checked; send the request again', {
          retryable: true,
          remediation: REMEDIATION.retryLater,
        });
      const id = newId('re');
      const simulated = decision.simulated;
      const b = new LedgerBatch(deps.store, now);
      try {
        await b.transfer({
          id,
          kind: 'refund',
          asset,
          amount: decision.amount,
          pending: !simulated,
          debit_account: walletAccount(wallet.id, asset, simulated),
          credit_account: accountId(simulated ? 'sys:simulated' : 'sys:payouts', asset),
          refund_id: id,
          session_id: session.id,
          ...(simulated ? { simulated: true } : {}),
        });
        if (c.quote && c.quote.fee_subunits > 0n)
          await reserveFee(b, {
            key: id,
            walletId: wallet.id,
            asset: nativeAsset(wallet),
            amount: c.quote.fee_subunits,
            refs: { refund_id: id, session_id: session.id },
          });
      } catch (e) {
        if (isLedgerError(e, 'insufficient_funds')) throw await insufficient(deps, b, session, wallet.id, asset, rail, e);
        throw e;
      }
      const refund: RefundDoc = {
        id,
        session_id: session.id,
        merchant_id: m.id,
        wallet_id: wallet.id,
        chain: wallet.chain,
        network: wallet.network,
        token: rail.token,
        asset,
        amount_subunits: decision.amount.toString(),
        destination: c.destination,
        destination_source: c.source,
        reason: c.reason,
        metadata: c.metadata,
        status: simulated ? 'completed' : 'pending',
        execution: simulated ? 'simulated' : 'chain',
        simulated,
        tx_hash: null,
        fee_subunits: simulated ? '0' : c.quote!.fee_subunits.toString(),
        fee_quote: c.quote && {
          fee_subunits: c.quote.fee_subunits.toString(),
          rent_subunits: c.quote.rent.toString(),
          gas_limit: c.quote.gas_limit?.toString() ?? null,
          gas_price: c.quote.gas_price?.toString() ?? null,
        },
        waiting_reason: null,
        failure_reason: null,
        next_attempt_at: simulated ? null : at,
        created_at: at,
        updated_at: at,
        completed_at: simulated ? at : null,
      };
      const ops: WriteOp[] = [
        { op: 'insert', coll: REFUNDS, doc: refund },
        ...b.ops(),
        totalsOp(totals, refund, 1n, at),
        refundAuditOp('created', refund, now),
      ];
      const events: string[] = [];
      if (simulated) {
        const ev = refundEventOp(refund, toApiNumber(refund.amount_subunits, rail.decimals), now);
        events.push((ev as { doc: { id: string } }).doc.id);
        ops.push(ev, refundAuditOp('completed', refund, now));
      }
      ops.push(...(opts.extra?.(refund) ?? []));
      await deps.store.write(ops);
      return { refund, events };
    },
    {
      attempts: 60,
      retryOn: (e) => isConflict(e) || isDuplicate(e),
      exhausted: () =>
        conflict('too many concurrent refunds of this session; retry the request', {
          retryable: true,
          remediation: REMEDIATION.retryLater,
        }),
    },
  );
}

/**
 * The wallet cannot cover the refund or its fee: because the session's own money is still being swept
 * into it (retry shortly), or because the merchant has moved it out (fund the wallet).
 */
async function insufficient(
  deps: RefundDeps,
  b: LedgerBatch,
  s: PaymentSessionState,
  walletId: string,
  asset: string,
  rail: Rail,
  e: unknown,
): Promise<ServiceError> {
  const native = nativeAsset(rail);
  const forFee = (e as { account?: string }).account === walletAccount(walletId, native) && native !== asset;
  let sweeping = false;
  for (const d of s.deposits.filter((x) => x.counted && !x.reverted && !x.simulated)) {
    if ((await latestSettlement(b, d.key))?.transfer.status === 'pending') sweeping = true;
  }
  if (sweeping && !forFee)
    return conflict(
      `this session's payment is still being swept into your settlement wallet ${walletId}; it can be refunded once the sweep confirms`,
      { retryable: true, remediation: 'Send the same request again in a minute.' },
    );
  const bal = await balance(deps.store, walletId, forFee ? native : asset);
  const coin = (forFee ? native : asset).split(':')[2]!;
  const decimals = forFee ? (coin === 'ETH' ? 18 : 9) : rail.decimals;
  return new ServiceError(
    409,
    `insufficient available balance${forFee ? ' for the network fee, which the merchant pays' : ''}: ${toApiNumber(bal.available < 0n ? 0n : bal.available, decimals)} ${coin} available in settlement wallet ${walletId}`,
    'INSUFFICIENT_FUNDS',
    {
      field: forFee ? undefined : 'amount_subunits',
      remediation: forFee
        ? `Fund the wallet's ${coin} for network fees (a payment session on the ${coin} rail, or an internal payout from another of your wallets).`
        : 'Fund the settlement wallet (GET /v1/wallets), or refund less.',
    },
  );
}

/** The Refund as the API shows it. */
export function presentRefund(r: RefundDoc, rails: Rail[]) {
  const decimals = findRail(rails, r.chain, r.network, r.token)?.decimals ?? 0;
  return {
    id: r.id,
    session_id: r.session_id,
    merchant_id: r.merchant_id,
    wallet_id: r.wallet_id,
    chain: r.chain,
    network: r.network,
    token: r.token,
    amount: toApiNumber(r.amount_subunits, decimals),
    amount_subunits: r.amount_subunits,
    destination: r.destination,
    destination_source: r.destination_source,
    reason: r.reason,
    status: r.status,
    execution: r.execution,
    simulated: r.simulated,
    tx_hash: r.tx_hash,
    fee_subunits: r.fee_subunits,
    waiting_reason: r.waiting_reason ?? null,
    failure_reason: r.failure_reason,
    metadata: r.metadata,
    created_at: r.created_at,
    updated_at: r.updated_at,
    completed_at: r.completed_at,
  };
}
