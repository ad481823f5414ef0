/**
 * Platform gas wallets: one per chain and network, derived from the seed on its own account (the `gas`
 * role of lib/chains/keys.ts; never a session or merchant wallet address). They pay the gas top-ups of
 * ERC-20 sweeps and payouts (Ethereum) and are the fee payer of every Solana sweep and payout.
 *
 * Operators fund and watch them (`npm run operator -- gas-wallets`). A balance below GAS_WALLET_MIN_ETH /
 * GAS_WALLET_MIN_SOL is logged and counted (gas_wallet_low_total); work that needs more than the wallet
 * holds waits (the caller keeps it due and says so in its status) instead of failing.
 */
import type { Config } from '../../config/index.ts';
import { fromSubunits, toSubunits } from '../core/money.ts';
import { nativeBalance, rpcErrorText } from '../chains/clients.ts';
import { networkIndex, type KeyChain, type KeyRef } from '../chains/keys.ts';
import type { MoneyOutMetrics } from '../chains/metrics.ts';

export const NATIVE: Record<KeyChain, { token: 'ETH' | 'SOL'; decimals: number }> = {
  ethereum: { token: 'ETH', decimals: 18 },
  solana: { token: 'SOL', decimals: 9 },
};

export const gasWalletRef = (chain: KeyChain, network: string): KeyRef => ({ role: 'gas', chain, index: networkIndex(network) });

export interface GasWalletInfo {
  chain: KeyChain;
  network: string;
  address: string;
  token: 'ETH' | 'SOL';
  /** smallest units; null when the chain is not reachable (no RPC URL, RPC error) */
  balance_subunits: string | null;
  /** token units */
  balance: string | null;
  min_balance: string;
  low: boolean;
  error: string | null;
}

export interface GasWalletDeps {
  config: Pick<Config, 'chains' | 'rails' | 'moneyOut'>;
  /** derives public addresses (a Signer or a KeyDeriver) */
  keys: { address(ref: KeyRef): string };
  metrics?: MoneyOutMetrics;
  log?: { warn(...a: unknown[]): void };
  /** balance reader (tests may replace it) */
  balanceOf?: (chain: KeyChain, rpcUrl: string, address: string) => Promise<bigint>;
}

/** `<chain> <network> <address> <balance>`, the operator's line: balance in ETH or SOL, or `unavailable`. */
export const gasWalletLine = (w: GasWalletInfo): string =>
  `${w.chain} ${w.network} ${w.address} ${w.balance === null ? 'unavailable' : w.balance}`;

/** what the operator should do about a gas wallet, if anything (stderr beside the lines) */
export const gasWalletWarning = (w: GasWalletInfo): string[] =>
  w.error
    ? [`${w.chain} ${w.network}: ${w.error}`]
    : w.low
      ? [
          `${w.chain} ${w.network} gas wallet is low: ${w.balance} ${w.token}, below the minimum ${w.min_balance} ${w.token}; fund ${w.address}`,
        ]
      : [];

export class GasWallets {
  private d: GasWalletDeps;

  constructor(deps: GasWalletDeps) {
    this.d = deps;
  }

  /** every chain and network that has a rail */
  networks(): Array<{ chain: KeyChain; network: string }> {
    const seen = new Set<string>();
    const out: Array<{ chain: KeyChain; network: string }> = [];
    for (const r of this.d.config.rails) {
      const k = `${r.chain}:${r.network}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ chain: r.chain, network: r.network });
    }
    return out;
  }

  address(chain: KeyChain, network: string): string {
    return this.d.keys.address(gasWalletRef(chain, network));
  }

  minBalance(chain: KeyChain): bigint {
    return toSubunits(this.d.config.moneyOut.gasWalletMin[chain], NATIVE[chain].decimals);
  }

  /** Reads the balance; a low one is logged and counted. */
  async check(chain: KeyChain, network: string): Promise<GasWalletInfo> {
    const { token, decimals } = NATIVE[chain];
    const address = this.address(chain, network);
    const min = this.minBalance(chain);
    const base = { chain, network, address, token, min_balance: fromSubunits(min, decimals) };
    const rpcUrl = this.d.config.chains[chain][network as 'testnet' | 'mainnet']?.rpcUrl ?? '';
    if (!rpcUrl) return { ...base, balance_subunits: null, balance: null, low: false, error: `no RPC URL for ${chain} ${network}` };
    let balance: bigint;
    try {
      balance = await (this.d.balanceOf ?? nativeBalance)(chain, rpcUrl, address);
    } catch (e) {
      return { ...base, balance_subunits: null, balance: null, low: false, error: `RPC error: ${rpcErrorText(e, 200)}` };
    }
    const low = balance < min;
    this.d.metrics?.gasWalletBalance.set({ chain, network }, Number(fromSubunits(balance, decimals)));
    if (low) {
      this.d.metrics?.gasWalletLow.inc({ chain, network });
      this.d.log?.warn(
        `gas wallet ${chain} ${network} ${address} is low: ${fromSubunits(balance, decimals)} ${token} (minimum ${base.min_balance}); fund it`,
      );
    }
    return { ...base, balance_subunits: balance.toString(), balance: fromSubunits(balance, decimals), low, error: null };
  }

  list(): Promise<GasWalletInfo[]> {
    return Promise.all(this.networks().map((n) => this.check(n.chain, n.network)));
  }

  /**
   * Whether the gas wallet holds at least `needed` (smallest units). When it does not, this is logged and
   * counted, and the caller waits (keeps its work due) rather than failing.
   */
  async covers(chain: KeyChain, network: string, needed: bigint): Promise<{ ok: boolean; balance: bigint | null; address: string }> {
    const info = await this.check(chain, network);
    const balance = info.balance_subunits === null ? null : BigInt(info.balance_subunits);
    const ok = balance !== null && balance >= needed;
    if (!ok && balance !== null) {
      if (!info.low) this.d.metrics?.gasWalletLow.inc({ chain, network });
      this.d.log?.warn(
        `gas wallet ${chain} ${network} ${info.address} holds ${info.balance} ${info.token}, needs ${fromSubunits(needed, NATIVE[chain].decimals)}: waiting until it is funded`,
      );
    }
    return { ok, balance, address: info.address };
  }
}
