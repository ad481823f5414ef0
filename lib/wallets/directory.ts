/**
 * Creating and finding wallets. A wallet's address comes from the platform seed on the wallets' own
 * derivation account (lib/chains/keys.ts, role `wallet`: Ethereum m/44'/60'/1'/0/i, Solana
 * m/44'/501'/i'/1'), so the keys that sign its payouts are the ones that received its money. The index
 * comes from the sequence `wallet:<chain>` in the store: handed out once, never reused.
 */
import { notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { isDuplicate, type Store } from '../store/port.ts';
import { AddressIndexAllocator, loadSeedPhrase } from '../addresses/addresses.ts';
import { KeyDeriver } from '../chains/keys.ts';
import { WALLETS, defaultWalletKey, type WalletDoc, type WalletType } from './model.ts';

export type WalletChain = WalletDoc['chain'];
export type WalletNetwork = WalletDoc['network'];

export interface WalletDirectoryDeps {
  store: Store;
  allocator: AddressIndexAllocator;
  /** the wallet address of an index (KeyDeriver.address with role `wallet`) */
  address(chain: WalletChain, index: number): string | Promise<string>;
  now(): Date;
}

export interface NewWallet {
  merchant_id: string;
  type: WalletType;
  name: string | null;
  chain: WalletChain;
  network: WalletNetwork;
}

export class WalletDirectory {
  private deps: WalletDirectoryDeps;
  /**
   * Settlement wallets found or created, by default key: a wallet is never changed or deleted and its
   * default key never moves, so one found stays right (every x402 challenge asked for it by a query)
   */
  private defaults = new Map<string, WalletDoc>();
  constructor(deps: WalletDirectoryDeps) {
    this.deps = deps;
  }

  private async build(w: NewWallet, isDefault: boolean): Promise<WalletDoc> {
    const index = await this.deps.allocator.next(`wallet:${w.chain}`);
    const address = await this.deps.address(w.chain, index);
    const doc: WalletDoc = {
      id: newId('wal'),
      merchant_id: w.merchant_id,
      type: w.type,
      name: w.name,
      chain: w.chain,
      network: w.network,
      address,
      derivation_index: index,
      is_default: isDefault,
      created_at: this.deps.now().toISOString(),
    };
    if (isDefault) doc.default_key = defaultWalletKey(w.merchant_id, w.chain, w.network);
    return doc;
  }

  async create(w: NewWallet): Promise<WalletDoc> {
    const doc = await this.build(w, false);
    await this.deps.store.write([{ op: 'insert', coll: WALLETS, doc }]);
    return doc;
  }

  /** The merchant's settlement wallet of a chain and network, created on first need (once, under races). */
  async defaultWallet(merchantId: string, chain: WalletChain, network: WalletNetwork): Promise<WalletDoc> {
    const key = defaultWalletKey(merchantId, chain, network);
    const known = this.defaults.get(key);
    if (known) return { ...known };
    const w = await this.findOrCreateDefault(key, merchantId, chain, network);
    if (this.defaults.size >= 10_000) this.defaults.clear();
    this.defaults.set(key, { ...w });
    return w;
  }

  private async findOrCreateDefault(key: string, merchantId: string, chain: WalletChain, network: WalletNetwork): Promise<WalletDoc> {
    const found = await this.deps.store.findOne<WalletDoc>(WALLETS, { default_key: key });
    if (found) return found;
    const doc = await this.build({ merchant_id: merchantId, type: 'merchant', name: 'Default', chain, network }, true);
    try {
      await this.deps.store.write([{ op: 'insert', coll: WALLETS, doc }]);
      return doc;
    } catch (e) {
      if (!isDuplicate(e)) throw e;
      // another request created it first (its index is a harmless gap)
      const winner = await this.deps.store.findOne<WalletDoc>(WALLETS, { default_key: key });
      if (!winner) throw e;
      return winner;
    }
  }

  /** The caller's wallet; another merchant's is a 404 like an unknown id. */
  async own(merchantId: string, id: unknown): Promise<WalletDoc> {
    const w = typeof id === 'string' && id.length <= 64 ? await this.deps.store.get<WalletDoc>(WALLETS, id) : null;
    if (!w || w.merchant_id !== merchantId) throw notFound('wallet');
    return w;
  }

  /** The wallet holding an address on a chain and network (any merchant's), if it is one of ours. */
  byAddress(chain: string, network: string, address: string): Promise<WalletDoc | null> {
    return this.deps.store.findOne<WalletDoc>(WALLETS, { chain, network, address });
  }
}

/**
 * The directory a node uses: wallet addresses from the platform seed (SEED_MNEMONIC or DATA_DIR/seed)
 * through the same KeyDeriver that signs wallet transactions, loaded on first need.
 */
export function openWalletDirectory(store: Store, dataDir: string, now: () => Date): WalletDirectory {
  let keys: KeyDeriver | null = null;
  return new WalletDirectory({
    store,
    now,
    allocator: new AddressIndexAllocator(store, 5),
    address(chain, index) {
      keys ??= new KeyDeriver(loadSeedPhrase(dataDir).phrase);
      return keys.address({ role: 'wallet', chain, index });
    },
  });
}
