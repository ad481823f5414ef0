/**
 * The transaction outbox's records (collection `chain_txs`) and the per-chain driver interface.
 * Amounts are digit strings in the chain's smallest unit; KeyRefs name keys, never hold them.
 */
import type { Doc } from '../../store/port.ts';
import type { KeyRef } from '../keys.ts';

export const CHAIN_TXS = 'chain_txs';
export const CHAIN_NONCES = 'chain_nonces';

/** What to send. */
export type TxIntent =
  /** ETH. deduct_fee: send value − gas × gas price (a sweep that empties its address) */
  | {
      chain: 'ethereum';
      kind: 'native';
      from: KeyRef;
      to: string;
      value: string;
      deduct_fee?: boolean;
      gas_limit?: string;
      gas_price?: string;
    }
  /**
   * an ERC-20 transfer(to, amount); gas_limit and gas_price may be pinned (a sweep topped up for exactly
   * them, a payout reserved for exactly them): a pinned transaction is never replaced at a higher price
   * (TxDriver.replaceable), since its payer reserved no more
   */
  | { chain: 'ethereum'; kind: 'erc20'; from: KeyRef; token: string; to: string; amount: string; gas_limit?: string; gas_price?: string }
  /** SOL; the fee payer signs too (the gas wallet), so `from` may send everything it holds */
  | { chain: 'solana'; kind: 'native'; from: KeyRef; to: string; lamports: string; fee_payer: KeyRef }
  /**
   * SPL transferChecked from the owner's associated token account to `to`'s (created if missing, paid by
   * the fee payer). `create_account: false`: not created (a payout whose quote found it and reserved no
   * rent): if it was closed since, the transfer fails on chain rather than spend rent nobody reserved.
   */
  | {
      chain: 'solana';
      kind: 'spl';
      from: KeyRef;
      mint: string;
      decimals: number;
      to: string;
      amount: string;
      fee_payer: KeyRef;
      create_account?: boolean;
    }
  /** a contract call by `from` (x402: transferWithAuthorization submitted by the gas wallet) */
  | { chain: 'ethereum'; kind: 'call'; from: KeyRef; to: string; data: string; gas_limit?: string; gas_price?: string }
  /**
   * a transaction built and signed by someone else that names `fee_payer` as its fee payer (x402: a payer's
   * Solana payment): `message` (base64) gets the fee payer's signature next to `signatures` (base64, by
   * signer position; the first, the fee payer's, empty). It cannot be signed again: when its blockhash
   * expires it fails.
   */
  | {
      chain: 'solana';
      kind: 'cosign';
      fee_payer: KeyRef;
      message: string;
      signatures: string[];
      from_address: string;
      to_address: string;
      /** our signing key: the fee payer */ from: KeyRef;
    };

export interface TxAttempt {
  /** Ethereum: 0x hex; Solana: base64 wire bytes */
  raw: string;
  /** Ethereum: tx hash; Solana: the first signature */
  hash: string;
  signed_at: string;
  /** Ethereum */
  gas_price?: string;
  gas_limit?: string;
  value?: string;
  /** Solana: the recent blockhash signed over, and the last block height at which it can land */
  blockhash?: string;
  last_valid_height?: number;
}

export type ChainTxStatus = 'signed' | 'sent' | 'confirmed' | 'failed';

export interface ChainTxDoc extends Doc {
  /** the purpose's idempotency key (e.g. `payout:po_…`, `sweep:swp_…:move`) */
  id: string;
  chain: 'ethereum' | 'solana';
  network: string;
  /** payout, sweep, topup, faucet …: picks the hook that runs in the final write */
  purpose: string;
  /** the record this transaction serves (payout id, sweep id) */
  ref: string | null;
  intent: TxIntent;
  from_address: string;
  to_address: string;
  status: ChainTxStatus;
  /** Ethereum: the sender's nonce, allocated from the store (never reused) */
  nonce: number | null;
  /** every signed version, oldest first; any of them may be the one that lands */
  attempts: TxAttempt[];
  /** the newest attempt's hash; on a final transaction, the hash that landed (if any) */
  tx_hash: string;
  broadcasts: number;
  last_broadcast_at: string | null;
  last_error: string | null;
  /** due time for the scanner while signed or sent; null once final */
  next_check_at: string | null;
  block_number: number | null;
  /** the network fee paid, in the native coin's smallest unit (wei, lamports) */
  fee_subunits: string | null;
  /** Solana: lamports the fee payer locked as rent of accounts the transaction created (a token account) */
  rent_subunits?: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
  final_at: string | null;
}

export interface NonceDoc extends Doc {
  /** `<chain>:<network>:<address>` */
  id: string;
  next: number;
  updated_at: string;
}

export type TxCheck =
  /** not landed yet (or not yet at depth) */
  | { state: 'pending'; landed?: boolean }
  | { state: 'confirmed'; hash: string; block: number; fee: string; rent?: string }
  | { state: 'failed'; reason: string; hash: string | null; block: number | null; fee: string | null }
  /** Solana: no attempt landed and the newest blockhash can no longer land: a new signature is safe */
  | { state: 'expired' };

/** Ethereum: what a first attempt pays for gas (legacy transactions: fee = gas used × gas price) */
export interface TxFees {
  gas_price: bigint;
  gas_limit: bigint;
}

/** One chain and network's transaction mechanics. */
export interface TxDriver {
  chain: 'ethereum' | 'solana';
  network: string;
  /** addresses of the intent's sender and receiver */
  addresses(intent: TxIntent): { from: string; to: string };
  /** Ethereum: the sender's next nonce as the chain sees it (latest block) */
  chainNonce?(address: string): Promise<number>;
  /**
   * Ethereum: the gas price and gas limit a first attempt of the intent is signed with (reads of the
   * chain that do not depend on the nonce, so the outbox asks them together with chainNonce)
   */
  fees?(intent: TxIntent): Promise<TxFees>;
  /**
   * signs a first attempt (Ethereum: with this nonce, and these fees when given; Solana: with a memo
   * carrying `rowId`, the outbox row's id, so two equal movements are two distinct transactions, each
   * findable on chain)
   */
  sign(intent: TxIntent, nonce: number | null, rowId: string, fees?: TxFees): Promise<TxAttempt>;
  /** Ethereum: a replacement with the same nonce and a higher gas price; Solana: a fresh blockhash (only after expiry) */
  resign(doc: ChainTxDoc): Promise<TxAttempt>;
  /**
   * Ethereum: whether a transaction not mined may be replaced at a higher gas price. Not when its intent
   * pins both gas limit and gas price: its payer reserved exactly limit × price (a payout's quote, the
   * platform gas parked for a move), and a replacement would burn money nobody reserved (the merchant's
   * own ETH beside parked gas, or platform gas for a merchant's payout). It waits, re-sent unchanged,
   * until the price comes back down.
   */
  replaceable?(doc: ChainTxDoc): boolean;
  /** sends the bytes; resolves when the node accepted them, throws its error otherwise */
  send(raw: string): Promise<void>;
  check(doc: ChainTxDoc): Promise<TxCheck>;
}
