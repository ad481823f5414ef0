/**
 * One chain and network as reconciliation sees it: its readers (counted RPC), its assets (the ledger's
 * `chain:network:TOKEN` against the chain's `native` or token contract / mint), its gas wallet, and which
 * addresses belong to the platform (gas wallet, merchant and agent wallets, session deposit addresses).
 */
import type { Config } from '../../../config/index.ts';
import type { Doc, Store } from '../../store/port.ts';
import { gasWalletRef } from '../gas-wallet.ts';
import type { KeyRef } from '../../chains/keys.ts';
import { JsonRpc } from './rpc.ts';
import { EthereumReader } from './ethereum.ts';
import { SolanaReader } from './solana.ts';
import { NATIVE, normalAddress } from './effects.ts';

export type Chain = 'ethereum' | 'solana';
export type Network = 'testnet' | 'mainnet';

export interface NetAsset {
  /** the ledger's asset id, `chain:network:TOKEN` */
  ledger: string;
  token: string;
  /** `native`, or the token contract (Ethereum, checksummed) / mint (Solana) */
  chainAsset: string;
}

export interface Controlled {
  kind: 'gas' | 'wallet' | 'deposit';
  address: string;
  wallet_id?: string;
  merchant_id?: string;
  session_id?: string;
}

interface WalletRow extends Doc {
  merchant_id: string;
  chain: string;
  network: string;
  address: string;
}
interface SessionRow extends Doc {
  merchant_id: string;
  address: string;
}

export class NetworkView {
  readonly chain: Chain;
  readonly network: Network;
  readonly store: Store;
  readonly rpc: JsonRpc;
  readonly eth: EthereumReader | null;
  readonly sol: SolanaReader | null;
  readonly assets: NetAsset[];
  readonly native: NetAsset;
  readonly gas: string;
  /** derives the public address of a key (fee payers of intents) */
  readonly keys: { address(ref: KeyRef): string };
  private readonly byChainAsset: Map<string, NetAsset>;

  constructor(o: {
    chain: Chain;
    network: Network;
    store: Store;
    config: Pick<Config, 'rails' | 'chains'>;
    keys: { address(ref: KeyRef): string };
    rpc?: JsonRpc;
  }) {
    this.chain = o.chain;
    this.network = o.network;
    this.store = o.store;
    const net = o.config.chains[o.chain][o.network];
    this.rpc = o.rpc ?? new JsonRpc(net.rpcUrl);
    this.eth = o.chain === 'ethereum' ? new EthereumReader(this.rpc) : null;
    this.sol = o.chain === 'solana' ? new SolanaReader(this.rpc, net.commitment) : null;
    this.assets = o.config.rails
      .filter((r) => r.chain === o.chain && r.network === o.network)
      .flatMap((r): NetAsset[] => {
        if (r.kind === 'native') return [{ ledger: `${o.chain}:${o.network}:${r.token}`, token: r.token, chainAsset: NATIVE }];
        if (!net.usdcToken) return [];
        return [{ ledger: `${o.chain}:${o.network}:${r.token}`, token: r.token, chainAsset: normalAddress(o.chain, net.usdcToken) }];
      });
    const native = this.assets.find((a) => a.chainAsset === NATIVE);
    this.native = native ?? {
      ledger: `${o.chain}:${o.network}:${o.chain === 'ethereum' ? 'ETH' : 'SOL'}`,
      token: o.chain === 'ethereum' ? 'ETH' : 'SOL',
      chainAsset: NATIVE,
    };
    if (!native) this.assets.unshift(this.native);
    this.byChainAsset = new Map(this.assets.map((a) => [a.chainAsset, a]));
    this.keys = o.keys;
    this.gas = normalAddress(o.chain, o.keys.address(gasWalletRef(o.chain, o.network)));
  }

  get key(): string {
    return `${this.chain}:${this.network}`;
  }

  /** the ledger asset of a chain asset (null: a token the service does not settle) */
  ledgerAsset(chainAsset: string): NetAsset | null {
    return this.byChainAsset.get(chainAsset) ?? null;
  }

  /** how an amount of a chain asset reads in a message: `2049280 lamports`, `1500000 USDC subunits` */
  amount(v: bigint | string, chainAsset: string): string {
    if (chainAsset === NATIVE) return `${v} ${this.chain === 'ethereum' ? 'wei' : 'lamports'}`;
    const a = this.ledgerAsset(chainAsset);
    return `${v} ${a ? `${a.token} subunits` : `units of ${chainAsset}`}`;
  }

  /** token mints / contracts (no native) */
  tokens(): string[] {
    return this.assets.filter((a) => a.chainAsset !== NATIVE).map((a) => a.chainAsset);
  }

  address(a: string): string {
    return normalAddress(this.chain, a);
  }

  /** which of these addresses belong to the platform, and as what */
  async controlled(addresses: Iterable<string>): Promise<Map<string, Controlled>> {
    const out = new Map<string, Controlled>();
    const list = [...new Set([...addresses].map((a) => this.address(a)))];
    if (list.includes(this.gas)) out.set(this.gas, { kind: 'gas', address: this.gas });
    const rest = list.filter((a) => a !== this.gas);
    for (let i = 0; i < rest.length; i += 200) {
      const part = rest.slice(i, i + 200);
      for (const w of await this.store.find<WalletRow>('wallets', { address: { $in: part } })) {
        if (w.chain === this.chain && w.network === this.network)
          out.set(this.address(w.address), {
            kind: 'wallet',
            address: this.address(w.address),
            wallet_id: w.id,
            merchant_id: w.merchant_id,
          });
      }
      const sessions = await this.store.find<SessionRow>('payment_sessions', {
        address: { $in: part },
        chain: this.chain,
        network: this.network,
      });
      for (const s of sessions) {
        const a = this.address(s.address);
        if (!out.has(a)) out.set(a, { kind: 'deposit', address: a, session_id: s.id, merchant_id: s.merchant_id });
      }
    }
    return out;
  }
}

/** every chain and network that has a rail and an RPC URL */
export function configuredNetworks(config: Pick<Config, 'rails' | 'chains'>): Array<{ chain: Chain; network: Network }> {
  const seen = new Set<string>();
  const out: Array<{ chain: Chain; network: Network }> = [];
  for (const r of config.rails) {
    const k = `${r.chain}:${r.network}`;
    if (seen.has(k) || !config.chains[r.chain][r.network]?.rpcUrl) continue;
    seen.add(k);
    out.push({ chain: r.chain, network: r.network });
  }
  return out;
}
