/**
 * Settlement of session deposits into the merchant's default wallet of the session's chain and network
 * (created on first need). On-chain deposits settle `pending` (the money is still at the deposit address;
 * the sweep posts it, `settlementPostOps`); simulated sandbox deposits settle available at once. A revert
 * takes the credit back. The ops join the session actor's write.
 */
import type { WriteOp } from '../store/port.ts';
import { LedgerBatch, addSettlement, addSettlementReversal } from '../ledger/index.ts';
import type { Store } from '../store/port.ts';
import type { WalletDirectory, WalletChain, WalletNetwork } from './directory.ts';

export interface SettledDeposit {
  key: string;
  amount_subunits: string;
  token: string;
  tx_hash: string | null;
  simulated: boolean;
}

export interface SettledSession {
  id: string;
  merchant_id: string;
  chain: string;
  network: string;
}

export async function settlementEffects(
  store: Store,
  wallets: WalletDirectory,
  s: SettledSession,
  credited: SettledDeposit[],
  reverted: SettledDeposit[],
  now: Date,
): Promise<WriteOp[]> {
  const b = new LedgerBatch(store, now);
  if (credited.length) {
    const wallet = await wallets.defaultWallet(s.merchant_id, s.chain as WalletChain, s.network as WalletNetwork);
    for (const d of credited) {
      await addSettlement(b, {
        depositKey: d.key,
        walletId: wallet.id,
        asset: `${s.chain}:${s.network}:${d.token}`,
        amount: d.amount_subunits,
        sessionId: s.id,
        txHash: d.tx_hash ?? undefined,
        simulated: d.simulated,
      });
    }
  }
  for (const d of reverted) await addSettlementReversal(b, d.key);
  return b.ops();
}
