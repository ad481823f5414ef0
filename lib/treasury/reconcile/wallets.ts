/**
 * Reconciliation: every wallet's ledger balance against its address on chain, per enabled rail of its
 * chain and network. The ledger figure is the posted balance of the wallet's on-chain account (simulated
 * sandbox money lives in a separate sub-account and is not compared); a payout broadcast but not yet
 * final shows as `in_flight_subunits` (reserved), which explains a temporary difference. A custody move
 * not yet confirmed (lib/payouts/custody.ts: the tokens of an internal transfer on their way) is in
 * flight too: its amount is still at the sender's address and not yet at the receiver's, so a wallet
 * whose difference is exactly its custody moves in flight is not listed. Platform gas parked at the
 * address (a top-up: `sys:gas@<address>`, lib/treasury/fee-booking.ts) is held there beside the wallet's
 * own money: the address is compared with both.
 */
import type { Config } from '../../../config/index.ts';
import type { Doc, Store } from '../../store/port.ts';
import { ACCOUNTS, parkedGasAccount, postedBalance, walletAccount, type LedgerAccount } from '../../ledger/index.ts';
import { nativeBalance, rpcErrorText, tokenBalance } from '../../chains/clients.ts';
import { CUSTODY_MOVES, IN_FLIGHT, type CustodyMoveDoc } from '../../payouts/custody.ts';

export interface ReconcileRow {
  wallet_id: string;
  merchant_id: string;
  chain: string;
  network: string;
  address: string;
  token: string;
  ledger_subunits: string;
  chain_subunits: string;
  /** chain − ledger */
  difference_subunits: string;
  in_flight_subunits: string;
  /** custody moves not yet confirmed: + on their way out of this address, − on their way in */
  custody_in_flight_subunits: string;
}

export interface ReconcileResult {
  checked: number;
  differences: ReconcileRow[];
  /** balances that could not be read (no RPC URL, no USDC contract, RPC error) */
  skipped: Array<{ wallet_id: string; token: string; reason: string }>;
}

interface WalletLike extends Doc {
  merchant_id: string;
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  address: string;
}

export interface ReconcileDeps {
  store: Store;
  config: Pick<Config, 'rails' | 'chains'>;
  /** balance reader: token null for the native coin */
  balanceOf?: (chain: 'ethereum' | 'solana', rpcUrl: string, token: string | null, address: string) => Promise<bigint>;
}

const readBalance = (chain: 'ethereum' | 'solana', rpcUrl: string, token: string | null, address: string) =>
  token ? tokenBalance(chain, rpcUrl, token, address) : nativeBalance(chain, rpcUrl, address);

export async function reconcile(d: ReconcileDeps): Promise<ReconcileResult> {
  const out: ReconcileResult = { checked: 0, differences: [], skipped: [] };
  const read = d.balanceOf ?? readBalance;
  // per wallet and asset: what the chain holds beyond the ledger until its custody moves confirm
  const custody = new Map<string, bigint>();
  const add = (k: string, v: bigint) => custody.set(k, (custody.get(k) ?? 0n) + v);
  for (const m of await d.store.find<CustodyMoveDoc>(CUSTODY_MOVES, { status: { $in: IN_FLIGHT } })) {
    add(`${m.from_wallet_id}|${m.asset}`, BigInt(m.amount_subunits));
    add(`${m.to_wallet_id}|${m.asset}`, -BigInt(m.amount_subunits));
  }
  let after = '';
  for (;;) {
    const page = await d.store.find<WalletLike>('wallets', after ? { id: { $gt: after } } : {}, { limit: 200 });
    for (const w of page) {
      const net = d.config.chains[w.chain]?.[w.network];
      for (const rail of d.config.rails.filter((r) => r.chain === w.chain && r.network === w.network)) {
        const asset = `${w.chain}:${w.network}:${rail.token}`;
        const token = rail.kind === 'native' ? null : net?.usdcToken || '';
        if (!net?.rpcUrl || token === '') {
          out.skipped.push({
            wallet_id: w.id,
            token: rail.token,
            reason: !net?.rpcUrl ? 'no RPC URL' : 'no USDC contract or mint configured',
          });
          continue;
        }
        let onChain: bigint;
        try {
          onChain = await read(w.chain, net.rpcUrl, token, w.address);
        } catch (e) {
          out.skipped.push({ wallet_id: w.id, token: rail.token, reason: `RPC error: ${rpcErrorText(e, 120)}` });
          continue;
        }
        const acc = await d.store.get<LedgerAccount>(ACCOUNTS, walletAccount(w.id, asset));
        const parked = rail.kind === 'native' ? await d.store.get<LedgerAccount>(ACCOUNTS, parkedGasAccount(w.address, asset)) : null;
        const ledger = (acc ? postedBalance(acc) : 0n) + (parked ? postedBalance(parked) : 0n);
        out.checked++;
        const moving = custody.get(`${w.id}|${asset}`) ?? 0n;
        if (ledger + moving !== onChain) {
          out.differences.push({
            wallet_id: w.id,
            merchant_id: w.merchant_id,
            chain: w.chain,
            network: w.network,
            address: w.address,
            token: rail.token,
            ledger_subunits: ledger.toString(),
            chain_subunits: onChain.toString(),
            difference_subunits: (onChain - ledger).toString(),
            in_flight_subunits: (BigInt(acc?.debits_pending ?? '0') + (moving > 0n ? moving : -moving)).toString(),
            custody_in_flight_subunits: moving.toString(),
          });
        }
      }
    }
    if (page.length < 200) return out;
    after = page[page.length - 1]!.id;
  }
}
