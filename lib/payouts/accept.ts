/**
 * Accepting a payout: every refusal first (each a 4xx that says what to change), then one atomic write
 * of the payout, its ledger transfer (id = payout id; the amount reserved, or moved at once), the day's
 * payout volume and, when it completes at once, its webhook row. Account compare-and-set makes racing
 * payouts of one wallet unable to overdraw it: the loser re-reads and decides again.
 *
 * Execution (README "Payouts"):
 * - destination is one of this service's wallets on the same chain and network: `ledger`, completed at once;
 *   with real money, a custody move (lib/payouts/custody.ts) carries the tokens after it on chain;
 * - the wallet's on-chain money covers it: `chain`, pending for the chain executor (payouts-chain);
 * - otherwise a sandbox merchant's simulated money covers it: `simulated`, completed at once, no broadcast;
 * - otherwise 409 `insufficient available balance`.
 */
import { REMEDIATION, badRequest, conflict, forbidden, ServiceError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { toApiNumber, toSubunits } from '../core/money.ts';
import { networkForbidden, networkGate } from '../core/environment.ts';
import { parseAmount } from '../core/amount.ts';
import { METADATA_MAX_BYTES } from '../core/metadata.ts';
import { retryOnConflict } from '../core/retry.ts';
import { findRail, railKey, type Rail } from '../../config/rails.ts';
import { isConflict, isDuplicate, type Doc, type Store, type WriteOp } from '../store/port.ts';
import { LedgerBatch, addPayout, balance, isLedgerError } from '../ledger/index.ts';
import type { AbuseOutcome } from '../runtime/metrics.ts';
import type { WalletDirectory } from '../wallets/directory.ts';
import type { WalletDoc } from '../wallets/model.ts';
import { checkDestination } from './destination.ts';
import { PAYOUTS, payoutEventOp, type PayoutDoc, type PayoutExecution } from './model.ts';
import { payoutAuditOp } from './audit.ts';
import { custodyMoveOp } from './custody.ts';
import { dailyVolume, withinAmountLimit, type PayoutLimits } from './limits.ts';
import type { Checked } from '../http/contract.ts';
import type { QuoteFee } from '../treasury/fee-quote.ts';
import type { FeeQuote } from '../treasury/fee-policy.ts';
import { reserveFee } from '../treasury/fee-booking.ts';
import { nativeAsset } from '../treasury/engine-deps.ts';

export type PayoutBody = Checked<'CreatePayoutRequest'>;

export interface PayoutMerchant {
  id: string;
  sandbox: boolean;
  kyc_status?: string;
}

export interface AcceptDeps {
  store: Store;
  rails: Rail[];
  wallets: WalletDirectory;
  limits: PayoutLimits;
  /** the network fee of an on-chain payout, which the merchant pays (lib/treasury/fee-policy.ts) */
  quoteFee: QuoteFee;
  now(): Date;
  /** counts a refusal in the abuse metric (same outcomes as sessions) */
  signal(outcome: AbuseOutcome, rail: { chain: string; network: string; token?: string }): void;
}

export const INSUFFICIENT = 'insufficient available balance';
/**
 * The environment gate (lib/core/environment.ts) for money out of a wallet on `network`: `field` is where
 * the request chose it; a refusal on mainnet is an abuse signal, as for sessions.
 */
export function checkWalletNetwork(m: PayoutMerchant, network: string, what: string, field: string, signal: () => void): void {
  const refusal = networkGate(m, network, what);
  if (!refusal) return;
  if (refusal.abuse) signal();
  throw networkForbidden(refusal, field, {
    sandbox: `Use a testnet wallet; mainnet needs a live merchant account.`,
    live: `Use a mainnet wallet; testnet belongs to sandbox merchants.`,
  });
}

/** Exactly one of amount (token units, the sessions' rules) and amount_subunits; at least the rail minimum. */
function payoutAmount(body: PayoutBody, rail: Rail): bigint {
  if ((body.amount === undefined) === (body.amount_subunits === undefined)) {
    throw badRequest('send exactly one of amount (token units) and amount_subunits (smallest units, a digit string)', {
      field: 'amount',
      remediation: 'Send amount (token units) or amount_subunits (smallest units), not both and not neither.',
    });
  }
  if (body.amount !== undefined) return parseAmount(Number(body.amount), rail);
  if (!/^(0|[1-9]\d{0,77})$/.test(body.amount_subunits!))
    throw badRequest('amount_subunits must be a digit string of smallest units without leading zeros', { field: 'amount_subunits' });
  const units = BigInt(body.amount_subunits!);
  if (units < toSubunits(rail.min_amount, rail.decimals)) {
    throw badRequest(
      `amount is below the minimum of ${rail.min_amount} ${rail.token} for ${rail.chain} ${rail.network}; pay out at least ${rail.min_amount}`,
      {
        field: 'amount_subunits',
        remediation: `Pay out at least ${rail.min_amount} ${rail.token} (min_amount in GET /v1/payment_methods).`,
      },
    );
  }
  return units;
}

export interface Accepted {
  payout: PayoutDoc;
  /** webhook rows written (for webhooks.nudge) */
  events: string[];
}

/** What passed every check and is about to be written. */
export interface CheckedPayout {
  wallet: WalletDoc;
  rail: Rail;
  amount: bigint;
  destination: string;
  metadata: Record<string, unknown> | null;
}

export async function checkPayout(deps: AcceptDeps, m: PayoutMerchant, body: PayoutBody): Promise<CheckedPayout> {
  const wallet = await deps.wallets.own(m.id, body.wallet_id);
  checkWalletNetwork(m, wallet.network, 'payouts', 'wallet_id', () =>
    deps.signal('mainnet_kyc_required', { chain: wallet.chain, network: wallet.network, token: body.token }),
  );
  const rail = findRail(deps.rails, wallet.chain, wallet.network, body.token);
  if (!rail) {
    const tokens = deps.rails.filter((r) => r.chain === wallet.chain && r.network === wallet.network).map((r) => r.token);
    throw badRequest(`token ${body.token} is not available on ${wallet.chain} ${wallet.network}; use one of ${tokens.join(', ')}`, {
      field: 'token',
      remediation: `Set token to one of ${tokens.join(', ')}.`,
    });
  }
  const amount = payoutAmount(body, rail);
  const dest = checkDestination(wallet.chain, body.destination);
  if (!dest.ok) throw badRequest(dest.reason, { field: 'destination' });
  const metadata = body.metadata ?? null;
  if (metadata && Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw badRequest(`metadata is larger than 4KB (${METADATA_MAX_BYTES} bytes as JSON); keep references in it, not documents`, {
      field: 'metadata',
      remediation: `Keep metadata under ${METADATA_MAX_BYTES} bytes of JSON: store ids and references, not documents.`,
    });
  }
  if (!withinAmountLimit(deps.limits, amount, rail.decimals)) {
    deps.signal('amount_limit_exceeded', rail);
    throw badRequest(
      `amount exceeds the per-payout limit of ${deps.limits.payoutAmountLimit} ${rail.token}; lower the amount or split the payout`,
      {
        field: 'amount',
        remediation: `Pay out at most ${deps.limits.payoutAmountLimit} ${rail.token} at once (the PAYOUT_AMOUNT_LIMIT setting), or split the payout.`,
      },
    );
  }
  return { wallet, rail, amount, destination: dest.address, metadata };
}

/** The day's payout volume after this payout, as a write; 400 when it would pass DAILY_PAYOUT_LIMIT. */
async function volumeOp(deps: AcceptDeps, m: PayoutMerchant, rail: Rail, amount: bigint, now: Date): Promise<WriteOp | null> {
  const v = await dailyVolume(deps.store, deps.limits, m.id, { key: railKey(rail), decimals: rail.decimals }, amount, now);
  if (v.ok) return v.op;
  deps.signal('daily_volume_limit_exceeded', rail);
  const left = toApiNumber(v.left, rail.decimals);
  throw badRequest(
    `daily payout limit of ${deps.limits.dailyPayoutLimit} ${rail.token} on ${rail.chain} ${rail.network} reached: ${left} ${rail.token} left today (UTC); lower the amount or try again tomorrow`,
    {
      field: 'amount',
      remediation: `Pay out at most ${left} ${rail.token} today, or wait for the next UTC day (the DAILY_PAYOUT_LIMIT setting).`,
    },
  );
}

/**
 * Builds and commits the payout (retrying lost races from fresh reads). `extra` adds writes that must
 * commit with it (the Idempotency-Key record); `before` runs first on every attempt (an idempotent
 * replay check) and may answer instead.
 */
export async function acceptPayout(
  deps: AcceptDeps,
  m: PayoutMerchant,
  c: CheckedPayout,
  opts: { extra?: (p: PayoutDoc) => WriteOp[]; before?: () => Promise<Accepted | undefined> } = {},
): Promise<Accepted> {
  const { wallet, rail, amount, destination } = c;
  const asset = railKey(rail);
  const target = await deps.wallets.byAddress(wallet.chain, wallet.network, destination);
  if (target?.id === wallet.id)
    throw badRequest("destination is the wallet's own address; choose another destination", { field: 'destination' });
  agentWalletGate(m, wallet, target);
  let quote: FeeQuote | null = null;
  const quoteOnce = async () =>
    (quote ??= await deps.quoteFee({
      chain: wallet.chain,
      network: wallet.network,
      token: rail.token,
      from: wallet.address,
      destination,
      amount,
    }));
  return retryOnConflict(
    async () => {
      const earlier = await opts.before?.();
      if (earlier) return earlier;
      const now = deps.now();
      const at = now.toISOString();
      const id = newId('po');
      const b = new LedgerBatch(deps.store, now);
      const bal = await balance(deps.store, wallet.id, asset);
      const onChain = bal.available - bal.simulated_available;
      // one source per payout: on-chain money first, then (sandbox only) simulated money
      const simulated = onChain < amount && m.sandbox && bal.simulated_available >= amount;
      const execution: PayoutExecution = target ? 'ledger' : simulated ? 'simulated' : 'chain';
      try {
        await addPayout(b, { payoutId: id, walletId: wallet.id, asset, amount, simulated, toWalletId: target?.id });
      } catch (e) {
        if (isLedgerError(e, 'insufficient_funds')) {
          throw new ServiceError(
            409,
            `${INSUFFICIENT}: ${toApiNumber(bal.available < 0n ? 0n : bal.available, rail.decimals)} ${rail.token} available in wallet ${wallet.id}${bal.pending > 0n ? ` (${toApiNumber(bal.pending, rail.decimals)} more pending)` : ''}`,
            'INSUFFICIENT_FUNDS',
            {
              field: 'amount',
              remediation:
                'Lower the amount to what the wallet has available (GET /v1/wallets/{wallet_id}), or wait for pending funds to settle.',
            },
          );
        }
        throw e;
      }
      const done = execution !== 'chain';
      const fee = done ? null : await reserveQuote(deps, b, id, wallet, await quoteOnce());
      const payout: PayoutDoc = {
        id,
        merchant_id: m.id,
        wallet_id: wallet.id,
        chain: wallet.chain,
        network: wallet.network,
        token: rail.token,
        asset,
        amount_subunits: amount.toString(),
        destination,
        destination_wallet_id: target?.id ?? null,
        status: done ? 'completed' : 'pending',
        execution,
        simulated,
        tx_hash: null,
        fee_subunits: done ? '0' : fee!.fee_subunits.toString(),
        fee_quote: fee && {
          fee_subunits: fee.fee_subunits.toString(),
          rent_subunits: fee.rent.toString(),
          gas_limit: fee.gas_limit?.toString() ?? null,
          gas_price: fee.gas_price?.toString() ?? null,
        },
        waiting_reason: null,
        failure_reason: null,
        metadata: c.metadata,
        next_attempt_at: done ? null : at,
        created_at: at,
        updated_at: at,
        completed_at: done ? at : null,
      };
      const ops: WriteOp[] = [{ op: 'insert', coll: PAYOUTS, doc: payout }, ...b.ops(), payoutAuditOp('created', payout, now)];
      // real money moved inside the ledger: its tokens follow on chain (lib/payouts/custody.ts)
      if (target && !simulated) ops.push(custodyMoveOp(id, wallet, target, rail.token, asset, amount, at));
      const vol = await volumeOp(deps, m, rail, amount, now);
      if (vol) ops.push(vol);
      const events: string[] = [];
      if (done) {
        const ev = payoutEventOp(payout, toApiNumber(amount, rail.decimals), now);
        events.push((ev as { doc: Doc }).doc.id);
        ops.push(ev, payoutAuditOp('completed', payout, now));
      }
      ops.push(...(opts.extra?.(payout) ?? []));
      await deps.store.write(ops);
      return { payout, events };
    },
    {
      attempts: 60,
      retryOn: (e) => isConflict(e) || isDuplicate(e),
      exhausted: () =>
        conflict('too many concurrent payouts on this wallet; retry the request', { retryable: true, remediation: REMEDIATION.retryLater }),
    },
  );
}

/**
 * An agent wallet spends only through its spend policy (spend attempts: caps, windows, allowlists,
 * approvals). A plain payout from it could go around all of that, so it is refused, except one that
 * returns the agent's money to one of the merchant's own merchant wallets (out of the agent's reach).
 */
export function agentWalletGate(m: PayoutMerchant, wallet: WalletDoc, target: WalletDoc | null): void {
  if (wallet.type !== 'agent') return;
  if (target && target.merchant_id === m.id && target.type === 'merchant') return;
  throw forbidden(
    'payouts from an agent wallet go through its spend policy; a plain payout may only return its money to one of your merchant wallets',
    {
      field: 'wallet_id',
      remediation: `Spend from the agent wallet with POST /v1/agent-wallets/${wallet.id}/spend-attempts, or pay out to one of your merchant wallets.`,
    },
  );
}

/** reserves the payout's network fee from the wallet's native balance (409 when it cannot) */
async function reserveQuote(deps: AcceptDeps, b: LedgerBatch, id: string, wallet: WalletDoc, q: FeeQuote): Promise<FeeQuote> {
  const asset = nativeAsset(wallet);
  try {
    await reserveFee(b, { key: id, walletId: wallet.id, asset, amount: q.fee_subunits, refs: { payout_id: id } });
  } catch (e) {
    if (!isLedgerError(e, 'insufficient_funds')) throw e;
    const native = asset.split(':')[2]!;
    const decimals = deps.rails.find((r) => railKey(r) === asset)?.decimals ?? (native === 'ETH' ? 18 : 9);
    const bal = await balance(deps.store, wallet.id, asset);
    throw new ServiceError(
      409,
      `${INSUFFICIENT} for the network fee: the payout's fee is ${toApiNumber(q.fee_subunits, decimals)} ${native} (paid by the merchant${q.rent > 0n ? `, including ${toApiNumber(q.rent, decimals)} ${native} rent for the destination's new token account` : ''}), ${toApiNumber(bal.available < 0n ? 0n : bal.available, decimals)} ${native} available in wallet ${wallet.id} beside the amount`,
      'INSUFFICIENT_FUNDS',
      {
        field: 'amount',
        remediation: `Fund the wallet's ${native} (a payment session on the ${native} rail paid to it, or an internal payout of ${native} from another of your wallets), or lower the amount when paying out ${native}.`,
      },
    );
  }
  return q;
}

/** The Payout as the API shows it. */
export function presentPayout(p: PayoutDoc, rails: Rail[]) {
  const rail = findRail(rails, p.chain, p.network, p.token);
  const decimals = rail?.decimals ?? 0;
  return {
    id: p.id,
    merchant_id: p.merchant_id,
    wallet_id: p.wallet_id,
    chain: p.chain,
    network: p.network,
    token: p.token,
    amount: toApiNumber(p.amount_subunits, decimals),
    amount_subunits: p.amount_subunits,
    destination: p.destination,
    destination_wallet_id: p.destination_wallet_id,
    status: p.status,
    execution: p.execution,
    simulated: p.simulated,
    tx_hash: p.tx_hash,
    fee_subunits: p.fee_subunits,
    waiting_reason: p.waiting_reason ?? null,
    failure_reason: p.failure_reason,
    metadata: p.metadata,
    created_at: p.created_at,
    updated_at: p.updated_at,
    completed_at: p.completed_at,
  };
}
