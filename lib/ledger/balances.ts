/** Balances of a wallet, per asset: what it may spend now and what is still on its way in. */
import type { Store } from '../store/port.ts';
import { ACCOUNTS, available, incoming, ownerIds, walletOwner, type LedgerAccount } from './accounts.ts';

export interface Balance {
  /** spendable now: on-chain plus simulated */
  available: bigint;
  /** credited but not yet available (a deposit still at its deposit address) */
  pending: bigint;
  /** the simulated (sandbox) part of `available` */
  simulated_available: bigint;
}

export async function balances(store: Store, walletId: string): Promise<Record<string, Balance>> {
  const [onChain, simulated] = await Promise.all(
    [walletOwner(walletId), walletOwner(walletId, true)].map((owner) => store.find<LedgerAccount>(ACCOUNTS, ownerIds(owner))),
  );
  const out: Record<string, Balance> = {};
  for (const a of [...onChain, ...simulated]) {
    const b = (out[a.asset] ??= { available: 0n, pending: 0n, simulated_available: 0n });
    b.available += available(a);
    b.pending += incoming(a);
    if (a.owner !== walletId) b.simulated_available += available(a);
  }
  return out;
}

/** One asset's balance of a wallet; zero when the wallet never held it. */
export async function balance(store: Store, walletId: string, asset: string): Promise<Balance> {
  return (await balances(store, walletId))[asset] ?? { available: 0n, pending: 0n, simulated_available: 0n };
}
