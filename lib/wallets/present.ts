/** Wallets and wallet transactions as the API shows them (amounts as numbers and exact digit strings). */
import { toApiNumber } from '../core/money.ts';
import { invalidCursor } from '../core/errors.ts';
import { findRail, railKey, type Rail } from '../../config/rails.ts';
import type { Balance } from '../ledger/balances.ts';
import type { WalletTxRow } from '../ledger/transfers.ts';
import type { WalletDoc } from './model.ts';

const ZERO: Balance = { available: 0n, pending: 0n, simulated_available: 0n };

/** One balance entry per enabled rail of the wallet's chain and network. */
export function presentWallet(w: WalletDoc, balances: Record<string, Balance>, rails: Rail[]) {
  return {
    id: w.id,
    merchant_id: w.merchant_id,
    type: w.type,
    name: w.name,
    chain: w.chain,
    network: w.network,
    address: w.address,
    is_default: w.is_default,
    balances: rails
      .filter((r) => r.chain === w.chain && r.network === w.network)
      .map((r) => {
        const b = balances[railKey(r)] ?? ZERO;
        return {
          token: r.token,
          available: toApiNumber(b.available, r.decimals),
          available_subunits: b.available.toString(),
          pending: toApiNumber(b.pending, r.decimals),
          pending_subunits: b.pending.toString(),
          simulated_available_subunits: b.simulated_available.toString(),
        };
      }),
    created_at: w.created_at,
  };
}

/** The asset key `chain:network:TOKEN` split into its rail (decimals from the rail list). */
export function railOfAsset(asset: string, rails: Rail[]): Rail | undefined {
  const [chain, network, token] = asset.split(':');
  return findRail(rails, chain, network, token);
}

export function presentWalletTx(r: WalletTxRow, rails: Rail[]) {
  const rail = railOfAsset(r.asset, rails);
  const token = r.asset.split(':')[2];
  return {
    id: r.id,
    wallet_id: r.wallet_id,
    type: r.type,
    direction: r.direction,
    amount: rail ? toApiNumber(r.amount, rail.decimals) : Number(r.amount),
    amount_subunits: r.amount,
    token,
    status: r.status,
    ...(r.session_id ? { session_id: r.session_id } : {}),
    ...(r.payout_id ? { payout_id: r.payout_id } : {}),
    ...(r.refund_id ? { refund_id: r.refund_id } : {}),
    ...(r.spend_attempt_id ? { spend_attempt_id: r.spend_attempt_id } : {}),
    ...(r.tx_hash ? { tx_hash: r.tx_hash } : {}),
    simulated: !!r.simulated,
    created_at: r.created_at,
    ...(r.posted_at ? { posted_at: r.posted_at } : {}),
  };
}

/** Wallet transactions page on their sort key (`<created_at>|<id>`), newest first. */
export function encodeTxCursor(sortKey: string): string {
  return Buffer.from(`t1:${sortKey}`, 'utf8').toString('base64url');
}

export function decodeTxCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = /^t1:(\d{4}-\d\d-\d\dT[\d:.]+Z\|wtx_[0-9a-f]{26})$/.exec(text);
  if (!m) throw invalidCursor();
  return m[1];
}
