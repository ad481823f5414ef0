/**
 * Wallets: a merchant's (or its agent's) own on-chain address per (chain, network), with ledger balances.
 * The address is derived from the platform seed on its own BIP-44 account (never a session address).
 */
import type { Doc } from '../store/port.ts';

export const WALLETS = 'wallets';
export type WalletType = 'merchant' | 'agent';

export interface WalletDoc extends Doc {
  id: string;
  merchant_id: string;
  type: WalletType;
  name: string | null;
  chain: 'ethereum' | 'solana';
  network: 'testnet' | 'mainnet';
  address: string;
  /** the address index on the wallets' derivation account; never reused */
  derivation_index: number;
  /** the merchant's settlement wallet of this chain and network (created on first need) */
  is_default: boolean;
  /** `<merchant>:<chain>:<network>` on the default wallet only: a unique key, so it is created once */
  default_key?: string;
  created_at: string;
  version?: number;
}

/** The default-wallet key: unique, so two racing first deposits create one wallet. */
export const defaultWalletKey = (merchantId: string, chain: string, network: string) => `${merchantId}:${chain}:${network}`;
