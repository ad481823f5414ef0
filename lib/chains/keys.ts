/**
 * Which key signs a chain transaction, named without the key itself: a KeyRef is (role, chain, index),
 * stored beside the transaction it signs; only the signer worker turns it into a private key.
 *
 * Derivation accounts (each role on its own BIP-44 account, so no address is ever shared between roles):
 * - deposit (session addresses, lib/addresses/addresses.ts): Ethereum m/44'/60'/0'/0/i, Solana m/44'/501'/i'/0'
 * - wallet (merchant and agent wallets, `derivation_index`): Ethereum m/44'/60'/1'/0/i, Solana m/44'/501'/i'/1'
 * - gas (one platform gas wallet per chain and network; index 0 testnet, 1 mainnet):
 *   Ethereum m/44'/60'/2'/0/n, Solana m/44'/501'/n'/2'
 * Solana's SLIP-0010 paths are hardened throughout, so the role sits in the last level there.
 */
import { HDNodeWallet, Mnemonic, encodeBase58, getBytes } from 'ethers';
import { ed25519PublicKey, slip10DerivePath } from '../addresses/addresses.ts';

export type KeyRole = 'deposit' | 'wallet' | 'gas';
export type KeyChain = 'ethereum' | 'solana';

export interface KeyRef {
  role: KeyRole;
  chain: KeyChain;
  index: number;
}

const ETH_ACCOUNT: Record<KeyRole, number> = { deposit: 0, wallet: 1, gas: 2 };
const SOL_CHANGE: Record<KeyRole, number> = { deposit: 0, wallet: 1, gas: 2 };

export const networkIndex = (network: string): number => (network === 'mainnet' ? 1 : 0);

export function keyPath(ref: KeyRef): string {
  if (!Number.isInteger(ref.index) || ref.index < 0 || ref.index >= 0x8000_0000)
    throw new Error('key index must be an integer in [0, 2^31)');
  return ref.chain === 'ethereum'
    ? `m/44'/60'/${ETH_ACCOUNT[ref.role]}'/0/${ref.index}`
    : `m/44'/501'/${ref.index}'/${SOL_CHANGE[ref.role]}'`;
}

export const refKey = (ref: KeyRef): string => `${ref.chain}:${ref.role}:${ref.index}`;

/**
 * Derives private keys and addresses from one mnemonic, caching the BIP-32 account nodes. Holds
 * private key material: lives in the signer worker (and, for addresses only, in services); never log it.
 */
export class KeyDeriver {
  private seed: Uint8Array;
  private root: HDNodeWallet;
  private accounts = new Map<string, HDNodeWallet>();
  private cache = new Map<string, { privateKey: Uint8Array; address: string }>();

  constructor(phrase: string) {
    this.seed = getBytes(Mnemonic.fromPhrase(phrase.trim().normalize('NFKD').split(/\s+/).join(' ')).computeSeed());
    this.root = HDNodeWallet.fromSeed(this.seed);
  }

  private derive(ref: KeyRef): { privateKey: Uint8Array; address: string } {
    const k = refKey(ref);
    const hit = this.cache.get(k);
    if (hit) return hit;
    let out: { privateKey: Uint8Array; address: string };
    if (ref.chain === 'ethereum') {
      const path = keyPath(ref);
      const parentPath = path.slice(0, path.lastIndexOf('/'));
      let parent = this.accounts.get(parentPath);
      if (!parent) {
        parent = this.root.derivePath(parentPath);
        this.accounts.set(parentPath, parent);
      }
      const node = parent.deriveChild(ref.index);
      out = { privateKey: getBytes(node.privateKey), address: node.address };
    } else {
      const node = slip10DerivePath(this.seed, keyPath(ref));
      out = { privateKey: new Uint8Array(node.key), address: encodeBase58(ed25519PublicKey(node.key)) };
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(k, out);
    return out;
  }

  address(ref: KeyRef): string {
    return this.derive(ref).address;
  }

  /** 32 bytes: a secp256k1 scalar (Ethereum) or an ed25519 seed (Solana) */
  privateKey(ref: KeyRef): Uint8Array {
    return this.derive(ref).privateKey;
  }
}
